#include "models/query_chat.h"

#include "models/chat_setup.h"
#include "models/llm_cache.h"

namespace flowrag {

Result<ChatModel*> QueryChatModel::Get() {
  if (!HasChatModel(options_)) return static_cast<ChatModel*>(nullptr);
  std::call_once(once_, [this] {
    cache_ = std::make_unique<StoreResponseCache>(responses_);
    Result<std::shared_ptr<ChatModel>> model = MakeChatModel(options_, cache_.get());
    if (!model.ok()) {
      status_ = model.status();
      return;
    }
    model_ = std::move(model).value();
  });
  if (!status_.ok()) return status_.WithContext("query chat model");
  return model_.get();
}

}  // namespace flowrag
