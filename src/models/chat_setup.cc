#include "models/chat_setup.h"

#include "llm/chat_client.h"

namespace flowrag {

bool HasChatModel(const EngineOptions& options) {
  return options.chat_model != nullptr || options.openai_chat.has_value() || ChatModelConfigured();
}

Result<std::shared_ptr<ChatModel>> MakeChatModel(const EngineOptions& options,
                                                 ResponseCache* cache) {
  if (options.chat_model != nullptr) return options.chat_model;
  OpenAiChatOptions o;
  if (options.openai_chat) {
    o = *options.openai_chat;
  } else {
    FLOWRAG_ASSIGN_OR_RETURN(o, OpenAiChatOptionsFromEnv(OpenAiChatOptions{}));
  }
  FLOWRAG_ASSIGN_OR_RETURN(auto client, OpenAiChatClient::Create(o, cache));
  return std::shared_ptr<ChatModel>(std::move(client));
}

}  // namespace flowrag
