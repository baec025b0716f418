#include "seedance/kv/openai_api.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace seedance::kv {
namespace {

using Json = nlohmann::ordered_json;

ParsedCompletion Bad(std::string param, std::string message) {
  ParsedCompletion p;
  p.error.param = std::move(param);
  p.error.message = std::move(message);
  return p;
}

std::string TypeName(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

std::string Expected(const std::string& field, const std::string& what, const Json& got) {
  return "'" + field + "' must be " + what + ", got " + TypeName(got);
}

// A whole number, also when written 16.0 (JSON has one number type).
std::optional<int64_t> WholeNumber(const Json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) {
      return static_cast<int64_t>(d);
    }
  }
  return std::nullopt;
}

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// The fields every response object opens with; `object` names its kind ("text_completion",
// "chat.completion", "chat.completion.chunk").
Json ChunkObject(std::string_view id, int64_t created, std::string_view model,
                 std::string_view object = "text_completion") {
  Json j;
  j["id"] = id;
  j["object"] = object;
  j["created"] = created;
  j["model"] = model;
  return j;
}

Json Usage(const CompletionUsage& usage) {
  return {{"prompt_tokens", usage.prompt_tokens},
          {"completion_tokens", usage.completion_tokens},
          {"total_tokens", usage.prompt_tokens + usage.completion_tokens}};
}

// Chat messages: a non-empty array of {role, content (a string or text parts), name?}.
std::optional<std::string> ParseMessages(const Json& v, std::vector<ChatMessage>& out) {
  if (!v.is_array() || v.empty()) return Expected("messages", "a non-empty array", v);
  for (size_t i = 0; i < v.size(); ++i) {
    const Json& m = v[i];
    const std::string at = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) return Expected(at, "an object", m);
    ChatMessage msg;
    bool have_role = false, have_content = false;
    for (const auto& [k, x] : m.items()) {
      if (k == "role") {
        if (!x.is_string()) return Expected(at + ".role", "a string", x);
        msg.role = x.get<std::string>();
        if (msg.role != "system" && msg.role != "user" && msg.role != "assistant") {
          return "'" + at + ".role' must be system, user or assistant, got '" + msg.role + "'";
        }
        have_role = true;
      } else if (k == "content") {
        if (x.is_string()) {
          msg.content = x.get<std::string>();
        } else if (x.is_array()) {
          for (const Json& part : x) {
            if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
                !part["text"].is_string()) {
              return "'" + at + ".content' parts must be {\"type\": \"text\", \"text\": string}";
            }
            msg.content += part["text"].get<std::string>();
          }
        } else {
          return Expected(at + ".content", "a string or an array of text parts", x);
        }
        have_content = true;
      } else if (k == "name") {
        if (!x.is_string()) return Expected(at + ".name", "a string", x);
      } else {
        return "'" + at + "' has an unsupported field: " + k;
      }
    }
    if (!have_role) return "'" + at + ".role' is required";
    if (!have_content) return "'" + at + ".content' is required";
    out.push_back(std::move(msg));
  }
  return std::nullopt;
}

ParsedCompletion ParseRequest(std::string_view body, bool chat) {
  Json j;
  try {
    j = Json::parse(body);
  } catch (const Json::parse_error& e) {
    return Bad("", "the body is not valid JSON (at byte " + std::to_string(e.byte) + ")");
  } catch (const Json::out_of_range&) {  // a number beyond a double, e.g. 1e999
    return Bad("", "the body holds a number too large for a double");
  }
  if (!j.is_object()) return Bad("", "the body must be a JSON object, got " + TypeName(j));
  CompletionParams p;
  p.chat = chat;
  bool have_model = false, have_prompt = false;
  for (const auto& [key_, v] : j.items()) {
    // The chat API's name for max_tokens.
    const std::string key = chat && key_ == "max_completion_tokens" ? "max_tokens" : key_;
    if (chat && (key == "prompt" || key == "echo" || key == "suffix")) {
      return Bad(key, "unrecognized request argument supplied: " + key);
    }
    if (!chat && key == "messages") {
      return Bad(key, "unrecognized request argument supplied: " + key);
    }
    if (key == "messages") {
      if (auto error = ParseMessages(v, p.messages)) return Bad(key, *error);
      have_prompt = true;
    } else if (key == "model") {
      if (!v.is_string()) return Bad(key, Expected(key, "a string", v));
      p.model = v.get<std::string>();
      have_model = true;
    } else if (key == "prompt") {
      if (v.is_string()) {
        p.prompt = v.get<std::string>();
      } else if (v.is_array() && v.size() == 1 && v[0].is_string()) {
        p.prompt = v[0].get<std::string>();
      } else if (v.is_array() && v.size() != 1) {
        return Bad(key,
                   "'prompt' as an array must hold exactly one string (batches of prompts "
                   "are not served), got " +
                       std::to_string(v.size()) + " elements");
      } else {
        return Bad(key, Expected(key, "a string or an array of one string", v));
      }
      have_prompt = true;
    } else if (key == "max_tokens") {
      if (v.is_null()) continue;
      const auto n = WholeNumber(v);  // errors name the field as the request spelled it
      if (!n) return Bad(key_, Expected(key_, "an integer", v));
      if (*n < 1 || *n > (1 << 30)) {
        return Bad(key_, "'" + key_ + "' must be 1 to " + std::to_string(1 << 30) + ", got " +
                             std::to_string(*n));
      }
      p.max_tokens = static_cast<int>(*n);
    } else if (key == "temperature" || key == "top_p") {
      if (v.is_null()) continue;
      if (!v.is_number()) return Bad(key, Expected(key, "a number", v));
      const double d = v.get<double>();
      if (key == "temperature") {
        if (!(d >= 0 && d <= 2)) return Bad(key, "'temperature' must be in 0..2");
        p.temperature = d;
      } else {
        if (!(d > 0 && d <= 1)) return Bad(key, "'top_p' must be in (0, 1]");
        p.top_p = d;
      }
    } else if (key == "n" || key == "best_of") {
      if (v.is_null()) continue;
      const auto n = WholeNumber(v);
      if (!n) return Bad(key, Expected(key, "an integer", v));
      if (*n != 1) return Bad(key, "'" + key + "' must be 1: one completion per request");
    } else if (key == "stream" || key == "echo") {
      if (v.is_null()) continue;
      if (!v.is_boolean()) return Bad(key, Expected(key, "a boolean", v));
      (key == "stream" ? p.stream : p.echo) = v.get<bool>();
    } else if (key == "stream_options") {
      if (v.is_null()) continue;
      if (!v.is_object()) return Bad(key, Expected(key, "an object", v));
      for (const auto& [k2, v2] : v.items()) {
        if (k2 != "include_usage") {
          return Bad(key, "unrecognized stream option: '" + k2 + "'");
        }
        if (!v2.is_boolean())
          return Bad(key, Expected("stream_options.include_usage", "a boolean", v2));
        p.include_usage = v2.get<bool>();
      }
    } else if (key == "stop") {
      if (v.is_null()) continue;
      if (v.is_string()) {
        p.stop = {v.get<std::string>()};
      } else if (v.is_array()) {
        if (v.size() > 4) return Bad(key, "'stop' takes at most 4 strings");
        for (const Json& s : v) {
          if (!s.is_string()) return Bad(key, Expected(key, "a string or an array of strings", s));
          p.stop.push_back(s.get<std::string>());
        }
      } else {
        return Bad(key, Expected(key, "a string or an array of strings", v));
      }
      for (const std::string& s : p.stop) {
        if (s.empty()) return Bad(key, "a stop string must not be empty");
      }
    } else if (key == "seed") {
      if (v.is_null()) continue;
      const auto n = WholeNumber(v);
      if (!n) return Bad(key, Expected(key, "an integer", v));
      p.seed = static_cast<uint64_t>(*n);
    } else if (key == "user") {
      if (!v.is_string()) return Bad(key, Expected(key, "a string", v));
    } else if (key == "logprobs" || key == "suffix") {
      if (!v.is_null()) return Bad(key, "'" + key + "' is not supported by this server");
    } else if (key == "presence_penalty" || key == "frequency_penalty") {
      if (v.is_null()) continue;
      if (!v.is_number()) return Bad(key, Expected(key, "a number", v));
      if (v.get<double>() != 0) return Bad(key, "'" + key + "' is not supported (only 0)");
    } else if (key == "logit_bias") {
      if (v.is_null() || (v.is_object() && v.empty())) continue;
      return Bad(key, "'logit_bias' is not supported by this server");
    } else {
      return Bad(key, "unrecognized request argument supplied: " + key);
    }
  }
  if (!have_model) return Bad("model", "'model' is required");
  if (!have_prompt) {
    return chat ? Bad("messages", "'messages' is required") : Bad("prompt", "'prompt' is required");
  }
  ParsedCompletion out;
  out.params = std::move(p);
  return out;
}

}  // namespace

ParsedCompletion ParseCompletionRequest(std::string_view body) { return ParseRequest(body, false); }
ParsedCompletion ParseChatRequest(std::string_view body) { return ParseRequest(body, true); }

std::string CompletionJson(std::string_view id, int64_t created, std::string_view model,
                           std::string_view text, std::string_view finish_reason,
                           const CompletionUsage& usage) {
  Json j = ChunkObject(id, created, model);
  j["choices"] = Json::array({Json{
      {"text", text}, {"index", 0}, {"logprobs", nullptr}, {"finish_reason", finish_reason}}});
  j["usage"] = Usage(usage);
  return Dump(j);
}

std::string CompletionChunkEvent(std::string_view id, int64_t created, std::string_view model,
                                 std::string_view text, std::string_view finish_reason) {
  Json j = ChunkObject(id, created, model);
  Json choice = {{"text", text}, {"index", 0}, {"logprobs", nullptr}, {"finish_reason", nullptr}};
  if (!finish_reason.empty()) choice["finish_reason"] = finish_reason;
  j["choices"] = Json::array({choice});
  return "data: " + Dump(j) + "\n\n";
}

namespace {

// A stream's closing usage event: no choices, the usage, under the stream's object name.
std::string UsageEvent(std::string_view id, int64_t created, std::string_view model,
                       std::string_view object, const CompletionUsage& usage) {
  Json j = ChunkObject(id, created, model, object);
  j["choices"] = Json::array();
  j["usage"] = Usage(usage);
  return "data: " + Dump(j) + "\n\n";
}

}  // namespace

std::string UsageChunkEvent(std::string_view id, int64_t created, std::string_view model,
                            const CompletionUsage& usage) {
  return UsageEvent(id, created, model, "text_completion", usage);
}

std::string ChatCompletionJson(std::string_view id, int64_t created, std::string_view model,
                               std::string_view text, std::string_view finish_reason,
                               const CompletionUsage& usage) {
  Json j = ChunkObject(id, created, model, "chat.completion");
  j["choices"] = Json::array({Json{{"index", 0},
                                   {"message", {{"role", "assistant"}, {"content", text}}},
                                   {"logprobs", nullptr},
                                   {"finish_reason", finish_reason}}});
  j["usage"] = Usage(usage);
  return Dump(j);
}

std::string ChatChunkEvent(std::string_view id, int64_t created, std::string_view model,
                           std::string_view text, std::string_view finish_reason, bool first) {
  Json j = ChunkObject(id, created, model, "chat.completion.chunk");
  Json delta = Json::object();
  if (first) delta["role"] = "assistant";
  if (!text.empty() || first) delta["content"] = text;
  Json choice = {{"index", 0}, {"delta", delta}, {"logprobs", nullptr}, {"finish_reason", nullptr}};
  if (!finish_reason.empty()) choice["finish_reason"] = finish_reason;
  j["choices"] = Json::array({choice});
  return "data: " + Dump(j) + "\n\n";
}

std::string ChatUsageChunkEvent(std::string_view id, int64_t created, std::string_view model,
                                const CompletionUsage& usage) {
  return UsageEvent(id, created, model, "chat.completion.chunk", usage);
}

std::string ErrorJson(const ApiError& e) {
  Json err = {{"message", e.message},
              {"type", e.type},
              {"param", e.param.empty() ? Json(nullptr) : Json(e.param)},
              {"code", e.code.empty() ? Json(nullptr) : Json(e.code)}};
  return Dump(Json{{"error", err}});
}

std::string ErrorEvent(const ApiError& e) { return "data: " + ErrorJson(e) + "\n\n"; }

std::string ModelsJson(std::string_view model, int64_t created) {
  Json m = {{"id", model}, {"object", "model"}, {"created", created}, {"owned_by", "seedance"}};
  return Dump(Json{{"object", "list"}, {"data", Json::array({m})}});
}

}  // namespace seedance::kv
