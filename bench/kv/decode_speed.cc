// Decode speed of the KV engine on a real model (issue 42 item 4): for each cache width and
// context length, the cache is filled to the context with K/V drawn from a normal distribution
// (decode time does not depend on the values, and filling by prefill would take minutes a
// point), then `steps` tokens are decoded one at a time and timed. One JSON object per line:
//   {"engine":"seedance","width":"4","context":2048,"repeat":0,"tokens_per_s":...,"cache_bytes":...}
//
//   build/bench/kv_decode_speed MODEL.gguf [--widths 32,8,4] [--contexts 512,2048,8128]
//                                          [--steps 32] [--repeats 3]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/kv/cache.h"
#include "seedance/kv/llama.h"
#include "seedance/kv/width.h"

namespace {

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "kv_decode_speed: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace seedance;
  if (argc < 2)
    return Fail(
        "usage: kv_decode_speed MODEL [--widths W,..] [--contexts N,..] "
        "[--steps N] [--repeats N]");
  std::string widths = "32,8,4", contexts = "512,2048,8128";
  int steps = 32, repeats = 3;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--widths")
      widths = value;
    else if (flag == "--contexts")
      contexts = value;
    else if (flag == "--steps")
      steps = std::atoi(value.c_str());
    else if (flag == "--repeats")
      repeats = std::atoi(value.c_str());
    else
      return Fail("unknown flag " + flag);
  }
  auto model = kv::LlamaModel::Load(*base::Env::Default(), argv[1]);
  if (!model.ok()) return Fail(model.status().ToString());
  const kv::LlamaConfig& c = model->config();
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0F, 1.0F);
  std::vector<float> k(static_cast<size_t>(c.kv_dim())), v(k.size()), logits(c.vocab_size);
  for (const std::string& w : Split(widths)) {
    auto width = kv::ParseKvWidth(w, "--widths");
    if (!width.ok()) return Fail(width.status().ToString());
    for (const std::string& ctx_text : Split(contexts)) {
      const int context = std::atoi(ctx_text.c_str());
      if (context < 1 || context + steps > c.seq_len) {
        return Fail("context " + ctx_text + " plus the steps passes the model's " +
                    std::to_string(c.seq_len));
      }
      for (int r = 0; r < repeats; ++r) {
        std::unique_ptr<kv::KvCache> cache;
        if (*width == kv::KvWidth::kFp32) {
          cache = kv::NewFullCache(model->cache_shape());
        } else {
          auto q = kv::NewQuantizedCache(model->cache_shape(), kv::QuantConfig::Of(*width, 32, 32));
          if (!q.ok()) return Fail(q.status().ToString());
          cache = std::move(*q);
        }
        for (int pos = 0; pos < context; ++pos) {
          for (int l = 0; l < c.n_layers; ++l) {
            for (float& x : k) x = normal(rng);
            for (float& x : v) x = normal(rng);
            if (auto s = cache->Append(l, pos, k, v); !s.ok()) return Fail(s.ToString());
          }
        }
        int token = 1;
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < steps; ++i) {
          if (auto s = model->Forward(token, context + i, *cache, logits); !s.ok()) {
            return Fail(s.ToString());
          }
          token = static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
        }
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::printf(
            "{\"engine\":\"seedance\",\"width\":\"%s\",\"context\":%d,\"repeat\":%d,"
            "\"tokens_per_s\":%.3f,\"cache_bytes\":%lld}\n",
            w.c_str(), context, r, steps / seconds, static_cast<long long>(cache->Bytes()));
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
