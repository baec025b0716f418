#include "seedance/kv/openai_api.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

namespace seedance::kv {
namespace {

using Json = nlohmann::json;

TEST(OpenAiApi, AcceptsWhatTheOpenAiClientSends) {
  const ParsedCompletion p = ParseCompletionRequest(
      R"({"model":"m","prompt":"hi","max_tokens":8,"temperature":0,"stream":true,)"
      R"("stream_options":{"include_usage":true},"stop":["\n","."],"seed":3,"n":1,)"
      R"("echo":false,"top_p":0.5,"user":"u","logprobs":null,"presence_penalty":0,)"
      R"("frequency_penalty":0.0,"logit_bias":{},"suffix":null,"best_of":1})");
  ASSERT_TRUE(p.params.has_value()) << p.error.message;
  EXPECT_EQ(p.params->model, "m");
  EXPECT_EQ(p.params->prompt, "hi");
  EXPECT_EQ(p.params->max_tokens, 8);
  EXPECT_EQ(p.params->temperature, 0);
  EXPECT_EQ(p.params->top_p, 0.5);
  EXPECT_TRUE(p.params->stream);
  EXPECT_TRUE(p.params->include_usage);
  EXPECT_EQ(p.params->stop, (std::vector<std::string>{"\n", "."}));
  EXPECT_EQ(p.params->seed, 3u);
  const ParsedCompletion q =
      ParseCompletionRequest(R"({"model":"m","prompt":["one"],"max_tokens":4.0,"stop":"x"})");
  ASSERT_TRUE(q.params.has_value()) << q.error.message;
  EXPECT_EQ(q.params->prompt, "one");
  EXPECT_EQ(q.params->max_tokens, 4);
  EXPECT_EQ(q.params->temperature, 1);  // OpenAI's default
  EXPECT_EQ(q.params->stop, std::vector<std::string>{"x"});
}

TEST(OpenAiApi, EveryBadFieldIsNamed) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {R"({"model":"m","prompt":"x",)", "", "not valid JSON"},
      {R"([1,2])", "", "must be a JSON object"},
      {R"({"model":"m","prompt":"x","max_tokens":7738e888})", "", "too large for a double"},
      {R"({"prompt":"x"})", "model", "'model' is required"},
      {R"({"model":"m"})", "prompt", "'prompt' is required"},
      {R"({"model":3,"prompt":"x"})", "model", "must be a string, got an integer"},
      {R"({"model":"m","prompt":7})", "prompt", "a string or an array of one string"},
      {R"({"model":"m","prompt":["a","b"]})", "prompt", "exactly one string"},
      {R"({"model":"m","prompt":"x","max_tokens":"9"})", "max_tokens", "an integer, got a string"},
      {R"({"model":"m","prompt":"x","max_tokens":1.5})", "max_tokens", "an integer, got a number"},
      {R"({"model":"m","prompt":"x","max_tokens":0})", "max_tokens", "must be 1 to 1073741824"},
      {R"({"model":"m","prompt":"x","max_tokens":2147483648})", "max_tokens",
       "must be 1 to 1073741824, got 2147483648"},
      {R"({"model":"m","prompt":"x","temperature":3})", "temperature", "0..2"},
      {R"({"model":"m","prompt":"x","temperature":"hot"})", "temperature", "a number"},
      {R"({"model":"m","prompt":"x","top_p":0})", "top_p", "(0, 1]"},
      {R"({"model":"m","prompt":"x","n":2})", "n", "must be 1"},
      {R"({"model":"m","prompt":"x","stream":"yes"})", "stream", "a boolean"},
      {R"({"model":"m","prompt":"x","stream_options":{"x":1}})", "stream_options",
       "unrecognized stream option"},
      {R"({"model":"m","prompt":"x","stop":["a","b","c","d","e"]})", "stop", "at most 4"},
      {R"({"model":"m","prompt":"x","stop":[1]})", "stop", "a string or an array of strings"},
      {R"({"model":"m","prompt":"x","stop":""})", "stop", "must not be empty"},
      {R"({"model":"m","prompt":"x","seed":"s"})", "seed", "an integer"},
      {R"({"model":"m","prompt":"x","logprobs":5})", "logprobs", "not supported"},
      {R"({"model":"m","prompt":"x","presence_penalty":1})", "presence_penalty", "only 0"},
      {R"({"model":"m","prompt":"x","logit_bias":{"1":2}})", "logit_bias", "not supported"},
      {R"({"model":"m","prompt":"x","temprature":0})", "temprature", "unrecognized request"},
  };
  for (const auto& [body, param, words] : cases) {
    const ParsedCompletion p = ParseCompletionRequest(body);
    ASSERT_FALSE(p.params.has_value()) << body;
    EXPECT_EQ(p.error.status, 400) << body;
    EXPECT_EQ(p.error.param, param) << body;
    EXPECT_NE(p.error.message.find(words), std::string::npos) << body << " -> " << p.error.message;
  }
}

// Any bytes give params or an error, never an exception; the JSON written back always parses.
TEST(OpenAiApi, MutatedBodiesNeverThrow) {
  const std::string seed =
      R"({"model":"m","prompt":["hé"],"max_tokens":8,"stop":["\n"],"stream":true,"seed":1})";
  std::mt19937 rng(5);
  for (int i = 0; i < 20000; ++i) {
    std::string body = seed;
    for (int m = 0, n = 1 + static_cast<int>(rng() % 4); m < n; ++m) {
      const size_t at = rng() % body.size();
      switch (rng() % 3) {
        case 0:
          body[at] = static_cast<char>(rng() % 256);
          break;
        case 1:
          body.erase(at, 1 + rng() % 3);
          break;
        default:
          body.insert(at, 1, "{}[]\",:0-e"[rng() % 10]);
      }
      if (body.empty()) body = "x";
    }
    const ParsedCompletion p = ParseCompletionRequest(body);
    if (!p.params) {
      EXPECT_FALSE(p.error.message.empty());
      EXPECT_TRUE(Json::accept(ErrorJson(p.error)));
    }
  }
}

TEST(OpenAiApi, ResponsesHaveTheShapesClientsParse) {
  const Json c = Json::parse(CompletionJson("cmpl-1", 100, "m", "hi \xC3", "length", {3, 2}));
  EXPECT_EQ(c["object"], "text_completion");
  EXPECT_EQ(c["choices"][0]["text"], "hi \xEF\xBF\xBD");  // a cut character becomes U+FFFD
  EXPECT_EQ(c["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(c["usage"]["total_tokens"], 5);
  const std::string event = CompletionChunkEvent("cmpl-1", 100, "m", "a", "");
  ASSERT_EQ(event.rfind("data: ", 0), 0u);
  ASSERT_EQ(event.substr(event.size() - 2), "\n\n");
  const Json chunk = Json::parse(event.substr(6));
  EXPECT_TRUE(chunk["choices"][0]["finish_reason"].is_null());
  const Json usage = Json::parse(UsageChunkEvent("cmpl-1", 100, "m", {1, 2}).substr(6));
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["completion_tokens"], 2);
  const Json models = Json::parse(ModelsJson("m", 100));
  EXPECT_EQ(models["data"][0]["id"], "m");
  ApiError e;
  e.message = "x";
  e.param = "max_tokens";
  const Json err = Json::parse(ErrorJson(e));
  EXPECT_EQ(err["error"]["type"], "invalid_request_error");
  EXPECT_EQ(err["error"]["param"], "max_tokens");
  EXPECT_TRUE(err["error"]["code"].is_null());
}

TEST(OpenAiApi, ChatRequestsTakeMessages) {
  const ParsedCompletion ok = ParseChatRequest(
      R"({"model": "m", "messages": [{"role": "system", "content": "s"},
          {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
           "name": "u"}], "max_completion_tokens": 7, "stream": true})");
  ASSERT_TRUE(ok.params) << ok.error.message;
  EXPECT_TRUE(ok.params->chat);
  ASSERT_EQ(ok.params->messages.size(), 2u);
  EXPECT_EQ(ok.params->messages[1].role, "user");
  EXPECT_EQ(ok.params->messages[1].content, "ab");
  EXPECT_EQ(ok.params->max_tokens, 7);
  const auto param = [](std::string_view body) { return ParseChatRequest(body).error.param; };
  EXPECT_EQ(param(R"({"model": "m"})"), "messages");
  EXPECT_EQ(param(R"({"model": "m", "messages": []})"), "messages");
  EXPECT_EQ(param(R"({"model": "m", "messages": [{"role": "tool", "content": "x"}]})"), "messages");
  EXPECT_EQ(param(R"({"model": "m", "messages": [{"role": "user"}]})"), "messages");
  EXPECT_EQ(param(R"({"model": "m", "messages": [{"role": "user", "content": 3}]})"), "messages");
  EXPECT_EQ(
      param(R"({"model": "m", "messages": [{"role": "user", "content": "x"}], "echo": true})"),
      "echo");
  EXPECT_EQ(
      param(R"({"model": "m", "messages": [{"role": "user", "content": "x"}], "prompt": "y"})"),
      "prompt");
  // A bad max_completion_tokens is named as the request spelled it.
  const ParsedCompletion zero = ParseChatRequest(
      R"({"model": "m", "messages": [{"role": "user", "content": "x"}],
          "max_completion_tokens": 0})");
  EXPECT_EQ(zero.error.param, "max_completion_tokens");
  EXPECT_NE(zero.error.message.find("'max_completion_tokens'"), std::string::npos);
  // And the completions API takes no messages.
  EXPECT_EQ(ParseCompletionRequest(R"({"model": "m", "prompt": "p", "messages": []})").error.param,
            "messages");
}

TEST(OpenAiApi, ChatResponsesHaveTheShapesClientsParse) {
  const Json c = Json::parse(ChatCompletionJson("chatcmpl-1", 100, "m", "hi", "stop", {3, 2}));
  EXPECT_EQ(c["object"], "chat.completion");
  EXPECT_EQ(c["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(c["choices"][0]["message"]["content"], "hi");
  EXPECT_EQ(c["usage"]["total_tokens"], 5);
  const Json first = Json::parse(ChatChunkEvent("c", 100, "m", "a", "", true).substr(6));
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(first["choices"][0]["delta"]["content"], "a");
  const Json last = Json::parse(ChatChunkEvent("c", 100, "m", "", "length", false).substr(6));
  EXPECT_FALSE(last["choices"][0]["delta"].contains("role"));
  EXPECT_FALSE(last["choices"][0]["delta"].contains("content"));
  EXPECT_EQ(last["choices"][0]["finish_reason"], "length");
  const Json usage = Json::parse(ChatUsageChunkEvent("c", 100, "m", {1, 2}).substr(6));
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["prompt_tokens"], 1);
}

}  // namespace
}  // namespace seedance::kv
