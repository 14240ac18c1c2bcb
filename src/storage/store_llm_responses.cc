// Store: the LLM response cache (table llm_cache; LlmResponseStore in
// store.h). StoreResponseCache (models/llm_cache.h) serves it to the chat
// clients.
#include "flowrag/models.h"
#include "sqldb/connection.h"
#include "storage/store.h"
#include "storage/unix_time.h"

namespace flowrag {

Result<std::optional<ChatResponse>> Store::GetCachedResponse(uint64_t key) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(Statement s,
                           conn_->Prepare("SELECT response, finish_reason, prompt_tokens, "
                                          "completion_tokens FROM llm_cache WHERE key = ?"));
  s.Bind(1, HashToSql(key));
  FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<ChatResponse>();
  ChatResponse r;
  r.content = s.Text(0);
  r.finish_reason = s.Text(1);
  r.prompt_tokens = s.Int(2);
  r.completion_tokens = s.Int(3);
  r.from_cache = true;
  return std::optional<ChatResponse>(std::move(r));
}

Status Store::PutCachedResponse(uint64_t key, std::string_view model, std::string_view request,
                                const ChatResponse& response) {
  std::lock_guard<std::mutex> lock(mu_);
  FLOWRAG_ASSIGN_OR_RETURN(
      Statement s,
      conn_->Prepare(
          "INSERT INTO llm_cache(key, model, request, response, finish_reason, "
          "prompt_tokens, completion_tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
          "ON CONFLICT(key) DO UPDATE SET model = excluded.model, request = "
          "excluded.request, response = excluded.response, finish_reason = "
          "excluded.finish_reason, prompt_tokens = excluded.prompt_tokens, "
          "completion_tokens = excluded.completion_tokens, created_at = "
          "excluded.created_at"));
  const int64_t now = UnixSeconds();
  return s.Bind(1, HashToSql(key))
      .Bind(2, model)
      .Bind(3, request)
      .Bind(4, response.content)
      .Bind(5, response.finish_reason)
      .Bind(6, response.prompt_tokens)
      .Bind(7, response.completion_tokens)
      .Bind(8, now)
      .Run();
}

}  // namespace flowrag
