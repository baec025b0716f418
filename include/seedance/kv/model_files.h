// A model and its tokenizer from the files a user names: a GGUF file brings both; a llama2.c
// checkpoint needs its tokenizer file beside it. Used by `kv serve` and the Python bindings, so
// both accept the same files.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "seedance/base/env.h"
#include "seedance/base/status.h"
#include "seedance/kv/chat_template.h"
#include "seedance/kv/llama.h"
#include "seedance/kv/text_tokenizer.h"

namespace seedance::kv {

struct ModelFiles {
  LlamaModel model;
  std::unique_ptr<TextTokenizer> tokenizer;
  // A GGUF file's chat template, when it has one this server renders (chat_template.h); else
  // why not, for /v1/chat/completions to say.
  std::optional<ChatTemplate> chat_template;
  std::string no_chat_template;
};

// Errors name the field: `model` (unreadable, or neither format), `tokenizer` (a GGUF model
// given a tokenizer file as well, or a llama2.c checkpoint given none).
base::StatusOr<ModelFiles> LoadModelFiles(base::Env& env, const std::string& model_path,
                                          const std::string& tokenizer_path);

}  // namespace seedance::kv
