// Fuzz target (libFuzzer): the body of POST /v1/completions and of POST /v1/chat/completions
// (kv/openai_api.h), each input read both ways. Contract: every
// input gives parameters or a 400 error with a message, never a crash or an exception; the error's
// JSON parses; accepted parameters are in the documented ranges.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "seedance/kv/openai_api.h"

namespace {

void Check(const seedance::kv::ParsedCompletion& p, bool chat) {
  namespace kv = seedance::kv;
  if (!p.params) {
    if (p.error.message.empty() || p.error.status != 400) __builtin_trap();
    if (!nlohmann::json::accept(kv::ErrorJson(p.error))) __builtin_trap();
    return;
  }
  const kv::CompletionParams& c = *p.params;
  if (c.max_tokens && *c.max_tokens < 1) __builtin_trap();
  if (!(c.temperature >= 0 && c.temperature <= 2) || !(c.top_p > 0 && c.top_p <= 1)) {
    __builtin_trap();
  }
  if (c.stop.size() > 4) __builtin_trap();
  for (const auto& s : c.stop) {
    if (s.empty()) __builtin_trap();
  }
  if (c.chat != chat || (chat && c.messages.empty()) || (!chat && !c.messages.empty())) {
    __builtin_trap();
  }
  for (const auto& m : c.messages) {
    if (m.role != "system" && m.role != "user" && m.role != "assistant") __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  Check(seedance::kv::ParseCompletionRequest(in), false);
  Check(seedance::kv::ParseChatRequest(in), true);
  return 0;
}
