#include "seedance/kv/chat_template.h"

#include <string>

namespace seedance::kv {
namespace {

constexpr std::string_view kStart = "<|im_start|>", kEnd = "<|im_end|>";

// The Jinja string literal opening at `text[at]` (a quote), unescaped; npos-safe.
std::string Literal(std::string_view text, size_t at) {
  const char quote = text[at];
  std::string out;
  size_t i = at + 1;
  for (; i < text.size() && text[i] != quote; ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      const char c = text[++i];
      out += c == 'n' ? '\n' : c == 't' ? '\t' : c;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

base::StatusOr<ChatTemplate> ChatTemplate::FromJinja(std::string_view jinja,
                                                     std::string_view where) {
  if (jinja.find(kStart) == std::string_view::npos || jinja.find(kEnd) == std::string_view::npos) {
    return base::InvalidArgumentError(
        "an unsupported chat template (this server renders ChatML, <|im_start|> ... <|im_end|>)",
        std::string(where));
  }
  ChatTemplate t;
  // A system message of the template's own, written before a conversation without one: the
  // first string literal after the condition that tests for it.
  const size_t cond = jinja.find("!= 'system'");
  if (cond != std::string_view::npos) {
    const std::string_view rest = jinja.substr(cond);
    const size_t q = rest.find_first_of("'\"", rest.find("{{"));
    if (q != std::string_view::npos) {
      const std::string literal = Literal(rest, q);
      const std::string head = std::string(kStart) + "system\n";
      const std::string tail = std::string(kEnd) + "\n";
      if (literal.starts_with(head) && literal.ends_with(tail)) {
        t.default_system_ = literal.substr(head.size(), literal.size() - head.size() - tail.size());
      }
    }
  }
  // A template that writes a system message of its own in some other form (an else branch of
  // `== 'system'`, say) would be rendered without it: refuse it rather than change the prompt.
  if (t.default_system_.empty() && (jinja.find("<|im_start|>system\\n") != std::string_view::npos ||
                                    jinja.find("<|im_start|>system\n") != std::string_view::npos)) {
    return base::InvalidArgumentError(
        "a ChatML template whose default system message this server does not read (it reads the "
        "one written when `messages[0]['role'] != 'system'`)",
        std::string(where));
  }
  return t;
}

base::StatusOr<ChatTemplate> ChatTemplate::FromGguf(const GgufFile& file) {
  if (!file.Has("tokenizer.chat_template")) {
    return base::NotFoundError("the file has no tokenizer.chat_template", file.source());
  }
  SEEDANCE_ASSIGN_OR_RETURN(const std::string jinja, file.Text("tokenizer.chat_template"));
  return FromJinja(jinja, file.source() + ": tokenizer.chat_template");
}

std::string ChatTemplate::Render(std::span<const ChatMessage> messages,
                                 bool add_generation_prompt) const {
  std::string out;
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i == 0 && messages[0].role != "system" && !default_system_.empty()) {
      out += std::string(kStart) + "system\n" + default_system_ + std::string(kEnd) + "\n";
    }
    out += std::string(kStart) + messages[i].role + "\n" + messages[i].content + std::string(kEnd) +
           "\n";
  }
  if (add_generation_prompt) out += std::string(kStart) + "assistant\n";
  return out;
}

}  // namespace seedance::kv
