// A model's chat template (feature KV-5): how `kv serve`'s /v1/chat/completions turns messages into
// the prompt the model was tuned on. GGUF files carry the template as Jinja text
// (tokenizer.chat_template); rather than run Jinja, the template's family is recognised and
// rendered natively, as llama.cpp does for its built-in list:
//   chatml  <|im_start|>{role}\n{content}<|im_end|>\n per message, then <|im_start|>assistant\n
//           for the reply. When the template writes a system message of its own for a
//           conversation that opens without one (`loop.first and messages[0]['role'] !=
//           'system'`, as SmolLM2's does), that literal is read from the template and written
//           the same way.
// Any other template is refused by name; so are templates' extras such as tool calls.
//
// Thread safety: immutable after construction.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "seedance/base/status.h"
#include "seedance/kv/gguf.h"

namespace seedance::kv {

struct ChatMessage {
  std::string role;  // system, user or assistant
  std::string content;
};

class ChatTemplate {
 public:
  // From the Jinja text; `where` names its source in errors (InvalidArgument: not a family this
  // renderer knows).
  static base::StatusOr<ChatTemplate> FromJinja(std::string_view jinja, std::string_view where);
  // From a GGUF file's tokenizer.chat_template (NotFound when the file has none).
  static base::StatusOr<ChatTemplate> FromGguf(const GgufFile& file);

  // The prompt for `messages`, ending with the assistant's turn when `add_generation_prompt`.
  std::string Render(std::span<const ChatMessage> messages, bool add_generation_prompt) const;

  std::string_view family() const { return "chatml"; }
  // The system message written when a conversation has none ("" when the template writes none).
  const std::string& default_system() const { return default_system_; }

 private:
  std::string default_system_;
};

}  // namespace seedance::kv
