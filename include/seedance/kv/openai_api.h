// The OpenAI completions API as `seedancectl kv serve` speaks it (feature KV-5): the request body
// of POST /v1/completions and of POST /v1/chat/completions read and validated before anything
// runs, and the JSON of responses, stream chunks, the model list and errors, in the shapes
// OpenAI's clients parse.
//
// Accepted fields (anything else is an "unrecognized request argument", as OpenAI answers):
//   model (string, required), prompt (string, or an array of exactly one string; required),
//   max_tokens (integer >= 1 or null; default 16), temperature (number 0..2; default 1),
//   top_p (number in (0, 1]; default 1), n and best_of (1 only), stream (boolean),
//   stream_options ({"include_usage": boolean}), echo (boolean), stop (string, or up to 4
//   strings, or null), seed (integer), user (string), logprobs (null only), presence_penalty and
//   frequency_penalty (0 only), logit_bias (null or {}), suffix (null only).
// Chat requests take `messages` (required: a non-empty array of {"role": system, user or
// assistant, "content": a string or an array of {"type": "text", "text"} parts, "name"?}) instead
// of `prompt`, `max_completion_tokens` as `max_tokens`, and no `echo` or `suffix`.
// A field of the wrong type names the field and the type expected. Errors are HTTP 400 with
// {"error": {"message", "type": "invalid_request_error", "param", "code"}}.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/kv/chat_template.h"

namespace seedance::kv {

struct CompletionParams {
  std::string model;
  std::string prompt;
  std::optional<int> max_tokens;  // absent or null: the server's default
  double temperature = 1;
  double top_p = 1;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool echo = false;
  std::optional<uint64_t> seed;
  std::vector<std::string> stop;
  bool chat = false;                  // a chat request: `messages`, not `prompt`
  std::vector<ChatMessage> messages;  // chat only
};

struct ApiError {
  int status = 400;
  std::string type = "invalid_request_error";
  std::string message;
  std::string param;  // the field at fault, or ""
  std::string code;   // e.g. "context_length_exceeded", or ""
};

struct ParsedCompletion {
  std::optional<CompletionParams> params;  // set when valid
  ApiError error;                          // otherwise
};

// Reads a request body. Never throws; any byte string gets params or an error.
ParsedCompletion ParseCompletionRequest(std::string_view body);
ParsedCompletion ParseChatRequest(std::string_view body);

struct CompletionUsage {
  int prompt_tokens = 0;
  int completion_tokens = 0;
};

// {"id", "object": "text_completion", "created", "model", "choices": [{"text", "index": 0,
// "logprobs": null, "finish_reason"}], "usage": {...}}. Text that is not valid UTF-8 (a byte token
// cut mid-character) is written with U+FFFD in its place.
std::string CompletionJson(std::string_view id, int64_t created, std::string_view model,
                           std::string_view text, std::string_view finish_reason,
                           const CompletionUsage& usage);
// One server-sent event: "data: {...}\n\n" with the same object, "finish_reason" null until the
// last chunk; `usage` (when given) on a chunk with no choices, as include_usage asks.
std::string CompletionChunkEvent(std::string_view id, int64_t created, std::string_view model,
                                 std::string_view text, std::string_view finish_reason);
std::string UsageChunkEvent(std::string_view id, int64_t created, std::string_view model,
                            const CompletionUsage& usage);
inline constexpr std::string_view kDoneEvent = "data: [DONE]\n\n";
std::string ErrorEvent(const ApiError& error);  // "data: {"error": ...}\n\n"

// The chat shapes: {"object": "chat.completion", "choices": [{"index": 0, "message": {"role":
// "assistant", "content"}, "logprobs": null, "finish_reason"}], "usage"}, and stream chunks
// {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {...}, ...}]} whose first
// delta carries the role.
std::string ChatCompletionJson(std::string_view id, int64_t created, std::string_view model,
                               std::string_view text, std::string_view finish_reason,
                               const CompletionUsage& usage);
std::string ChatChunkEvent(std::string_view id, int64_t created, std::string_view model,
                           std::string_view text, std::string_view finish_reason, bool first);
std::string ChatUsageChunkEvent(std::string_view id, int64_t created, std::string_view model,
                                const CompletionUsage& usage);

std::string ErrorJson(const ApiError& error);
// {"object": "list", "data": [{"id", "object": "model", "created", "owned_by": "seedance"}]}
std::string ModelsJson(std::string_view model, int64_t created);

}  // namespace seedance::kv
