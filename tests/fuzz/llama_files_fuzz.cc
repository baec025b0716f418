// Fuzz target (libFuzzer): the llama2.c checkpoint and tokenizer readers (the first byte picks
// which). Built by the `asan` preset (clang, ASan + UBSan); .ci/run runs it for a fixed time from
// the seeds in tests/fuzz/corpus/llama_files/. A crash, a sanitizer report or a timeout fails CI.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seedance/base/fake_env.h"
#include "seedance/kv/llama.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (text.empty()) return 0;
  const std::string_view body = text.substr(1);
  if (text[0] & 1) {
    (void)seedance::kv::LlamaModel::FromBytes(body, "model.bin");
  } else {
    seedance::base::FakeEnv env;
    env.SetFile("/tok.bin", std::string(body));
    auto tok = seedance::kv::Tokenizer::Load(env, "/tok.bin", 300);
    if (tok.ok()) {
      const std::vector<int> ids = tok->Encode("hello \xff world");
      int previous = 1;
      for (int id : ids) (void)tok->Decode(std::exchange(previous, id), id);
    }
  }
  return 0;
}
