#include "seedance/kv/model_files.h"

#include "seedance/kv/bpe_tokenizer.h"
#include "seedance/kv/gguf.h"

namespace seedance::kv {

base::StatusOr<ModelFiles> LoadModelFiles(base::Env& env, const std::string& model_path,
                                          const std::string& tokenizer_path) {
  auto bytes = env.ReadFile(model_path);
  if (!bytes.ok()) return bytes.status().WithWhere("model");
  if (bytes->starts_with("GGUF")) {
    if (!tokenizer_path.empty()) {
      return base::InvalidArgumentError(
          "a GGUF model brings its own tokenizer; give no tokenizer file with " + model_path,
          "tokenizer");
    }
    SEEDANCE_ASSIGN_OR_RETURN(const GgufFile file, GgufFile::Parse(*bytes, model_path));
    SEEDANCE_ASSIGN_OR_RETURN(LlamaModel model, LlamaModel::FromGguf(file));
    SEEDANCE_ASSIGN_OR_RETURN(BpeTokenizer tokenizer, BpeTokenizer::FromGguf(file));
    if (tokenizer.vocab_size() != model.config().vocab_size) {
      return base::InvalidArgumentError(
          "the tokenizer has " + std::to_string(tokenizer.vocab_size()) +
              " tokens and the model's embedding " + std::to_string(model.config().vocab_size),
          model_path);
    }
    ModelFiles out{std::move(model), std::make_unique<BpeTokenizer>(std::move(tokenizer)),
                   std::nullopt, ""};
    base::StatusOr<ChatTemplate> chat = ChatTemplate::FromGguf(file);
    if (chat.ok()) {
      out.chat_template = std::move(*chat);
    } else {
      out.no_chat_template = std::string(chat.status().message());
    }
    return out;
  }
  if (tokenizer_path.empty()) {
    return base::InvalidArgumentError(
        "a llama2.c checkpoint needs its tokenizer file (" + model_path + " is not GGUF)",
        "tokenizer");
  }
  SEEDANCE_ASSIGN_OR_RETURN(LlamaModel model, LlamaModel::FromBytes(*bytes, model_path));
  SEEDANCE_ASSIGN_OR_RETURN(Tokenizer tokenizer,
                            Tokenizer::Load(env, tokenizer_path, model.config().vocab_size));
  return ModelFiles{std::move(model), std::make_unique<Tokenizer>(std::move(tokenizer)),
                    std::nullopt, "a llama2.c checkpoint has no chat template"};
}

}  // namespace seedance::kv
