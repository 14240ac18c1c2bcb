// Fuzz target: the HTTP API's request parsing, without sockets: the body as
// a JSON object (src/server/request_json.h ParseJsonObject), the query and
// document requests (src/server/handlers.h ParseQueryRequest,
// ParseDocuments), AnswerOptions::Validate and every retrieval method's
// option parsing (the Override / CheckAllUsed pair each retriever runs on
// "options"), the route of a path (src/server/routes.h ParseRoute), and
// the front end's framing checks of a head (src/server/connections.h
// CheckFraming, AnnouncedContentLength).
//
// Input: a request body. Its first line is also read as a request path, and
// the whole of it as a request head.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "retrieval/one_hop_retriever.h"
#include "retrieval/params.h"
#include "retrieval/ppr_retriever.h"
#include "retrieval/qafd_retriever.h"
#include "retrieval/sa_retriever.h"
#include "retrieval/semflow_retriever.h"
#include "retrieval/text_retrievers.h"
#include "server/connections.h"
#include "server/errors.h"
#include "server/handlers.h"
#include "server/request_json.h"
#include "server/routes.h"

namespace {

namespace server = flowrag::server;

void CheckApiError(const server::ApiError& e) {
  FUZZ_CHECK(!e.message.empty() && e.message.size() <= flowrag::fuzz::kMaxErrorBytes,
             "error message empty or too long: " + e.message.substr(0, 300));
  FUZZ_CHECK(e.http_status >= 400 && e.http_status < 600, "error status");
  // What the server sends (http_server.cc dumps with error_handler_t::replace).
  (void)server::ErrorReply(e).body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void CheckStatus(const flowrag::Status& st) {
  if (st.ok()) return;
  FUZZ_CHECK_ERROR(st);
  CheckApiError(server::ErrorFromStatus(st, "options"));
}

template <typename Options>
void ParseMethodOptions(const std::map<std::string, std::string>& params, const char* method) {
  flowrag::ParamReader reader(&params);
  Options o;
  flowrag::Status st = o.Override(reader);
  if (st.ok()) st = reader.CheckAllUsed(method);
  CheckStatus(st);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const server::Route route = server::ParseRoute(body.substr(0, body.find('\n')));
  (void)server::RouteLabel(route.kind);
  const size_t head_end = server::HeadEnd(body);
  const std::string_view head = body.substr(0, head_end == std::string_view::npos ? size : head_end);
  if (std::optional<server::FramingError> e = server::CheckFraming(head)) {
    FUZZ_CHECK(e->http_status == 400 || e->http_status == 501, "framing status");
    FUZZ_CHECK(!e->message.empty() && e->message.size() <= flowrag::fuzz::kMaxErrorBytes,
               "framing message empty or too long: " + e->message.substr(0, 300));
  } else {
    (void)server::AnnouncedContentLength(head);
  }

  nlohmann::json request;
  if (auto e = server::ParseJsonObject(body, &request)) {
    CheckApiError(*e);
    return 0;
  }
  std::string question;
  flowrag::AnswerOptions options;
  if (auto e = server::ParseQueryRequest(request, 30000, &question, &options)) {
    CheckApiError(*e);
  } else {
    CheckStatus(options.Validate());
    const auto& params = options.query.params;
    ParseMethodOptions<flowrag::QafdOptions>(params, "qafd");
    ParseMethodOptions<flowrag::PprOptions>(params, "ppr");
    ParseMethodOptions<flowrag::SaOptions>(params, "sa");
    ParseMethodOptions<flowrag::SemFlowOptions>(params, "semflow");
    ParseMethodOptions<flowrag::OneHopOptions>(params, "onehop");
    ParseMethodOptions<flowrag::HybridOptions>(params, "hybrid");
    ParseMethodOptions<flowrag::DenseOptions>(params, "dense");
  }
  std::vector<flowrag::DocumentInput> documents;
  flowrag::IndexOptions index_options;
  if (auto e = server::ParseDocuments(request, &documents, &index_options)) {
    CheckApiError(*e);
  } else {
    FUZZ_CHECK(!documents.empty(), "no documents accepted");
    CheckStatus(index_options.chunking.Validate());
  }
  return 0;
}
