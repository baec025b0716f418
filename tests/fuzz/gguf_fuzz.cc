// Fuzz target (libFuzzer): the GGUF reader (kv/gguf.h) and what reads a parsed file — the
// Llama model loader and the byte-level BPE tokenizer. Built by the `asan` preset; .ci/run runs
// it for a fixed time from the seeds in tests/fuzz/corpus/gguf/ (tiny models written by
// tests/fuzz/make_gguf_seeds.py with the `gguf` package). A crash, a sanitizer report or a
// timeout fails CI.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "seedance/kv/bpe_tokenizer.h"
#include "seedance/kv/gguf.h"
#include "seedance/kv/llama.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto file = seedance::kv::GgufFile::Parse(bytes, "fuzz.gguf");
  if (!file.ok()) return 0;
  for (const seedance::kv::GgufTensor& t : file->tensors()) {
    if (t.elements() <= (1 << 20)) (void)file->Dequantize(t);
  }
  (void)seedance::kv::LlamaModel::FromGguf(*file);
  auto tok = seedance::kv::BpeTokenizer::FromGguf(*file);
  if (tok.ok()) {
    const auto ids = tok->Encode("Hello, world! it's 42 \xff\xfe <|im_start|>x");
    (void)tok->Decode(ids);
  }
  return 0;
}
