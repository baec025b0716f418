// The ChatML renderer against hand-written renderings of SmolLM2's template (Transformers' Jinja
// rendering of the same file is compared in tests/cli/test_kv_serve_gguf.py).
#include "seedance/kv/chat_template.h"

#include <gtest/gtest.h>

#include <vector>

namespace seedance::kv {
namespace {

// SmolLM2-135M-Instruct's tokenizer.chat_template, as its GGUF file holds it.
constexpr std::string_view kSmolLm2 =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}";

TEST(ChatTemplateTest, ChatMlWithTheTemplatesOwnSystemMessage) {
  auto t = ChatTemplate::FromJinja(kSmolLm2, "t");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->default_system(),
            "You are a helpful AI assistant named SmolLM, trained by Hugging Face");
  const std::vector<ChatMessage> user = {{"user", "Hi"}};
  EXPECT_EQ(t->Render(user, true),
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
            "Face<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  const std::vector<ChatMessage> with_system = {
      {"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello."}, {"user", "Bye"}};
  EXPECT_EQ(t->Render(with_system, false),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n");
}

TEST(ChatTemplateTest, PlainChatMlAndOtherFamilies) {
  auto plain = ChatTemplate::FromJinja(
      "{% for m in messages %}{{'<|im_start|>' + m['role'] + '\\n' + m['content'] + "
      "'<|im_end|>\\n'}}{% endfor %}",
      "t");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->default_system(), "");
  const std::vector<ChatMessage> user = {{"user", "Hi"}};
  EXPECT_EQ(plain->Render(user, true), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  auto llama3 = ChatTemplate::FromJinja(
      "{% for m in messages %}{{ '<|start_header_id|>' + m['role'] + '<|end_header_id|>' }}"
      "{% endfor %}",
      "model.gguf: tokenizer.chat_template");
  ASSERT_FALSE(llama3.ok());
  EXPECT_EQ(llama3.status().where(), "model.gguf: tokenizer.chat_template");
  EXPECT_NE(llama3.status().message().find("ChatML"), std::string::npos);
}

// A default system message written in another form (Qwen2.5's: the else branch of a
// `== 'system'` test) is not read, so the template is refused rather than rendered without it.
TEST(ChatTemplateTest, ADefaultSystemMessageItCannotReadIsRefused) {
  auto t = ChatTemplate::FromJinja(
      "{%- if messages[0]['role'] == 'system' %}{{- '<|im_start|>system\\n' + "
      "messages[0]['content'] + '<|im_end|>\\n' }}{%- else %}{{- '<|im_start|>system\\nYou are "
      "Qwen.<|im_end|>\\n' }}{%- endif %}{% for m in messages %}{{'<|im_start|>' + m['role'] + "
      "'\\n' + m['content'] + '<|im_end|>\\n'}}{% endfor %}",
      "q.gguf: tokenizer.chat_template");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().where(), "q.gguf: tokenizer.chat_template");
  EXPECT_NE(t.status().message().find("default system message"), std::string::npos);
}

}  // namespace
}  // namespace seedance::kv
