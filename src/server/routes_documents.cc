// POST /v1/documents and DELETE /v1/documents/{id}: incremental updates. The
// engine writes them in one transaction each and then swaps its snapshot, so
// queries running meanwhile see either the old or the new corpus.
#include <string>
#include <vector>

#include "server/handlers.h"
#include "server/request_json.h"

namespace flowrag::server {
namespace {

constexpr size_t kMaxDocumentsPerRequest = 10000;
// A document id must fit a request line (DELETE /v1/documents/{id}); MCP's
// limit (mcp/tools.h).
constexpr size_t kMaxIdBytes = 1024;

}  // namespace

std::optional<ApiError> ParseDocuments(const nlohmann::json& request,
                                       std::vector<DocumentInput>* documents,
                                       IndexOptions* options) {
  if (auto e = RejectUnknownFields(request, {"documents", "chunking"})) return e;
  auto it = request.find("documents");
  if (it == request.end() || !it->is_array()) {
    return BadRequest("documents: expected an array of {id, title, text} objects", "documents");
  }
  if (it->empty() || it->size() > kMaxDocumentsPerRequest) {
    return BadRequest("documents: expected 1 to " + std::to_string(kMaxDocumentsPerRequest) +
                          " documents, got " + std::to_string(it->size()),
                      "documents");
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const nlohmann::json& d = (*it)[i];
    const std::string path = "documents[" + std::to_string(i) + "]";
    if (!d.is_object()) {
      return BadRequest(path + ": expected an object {id, title, text}", path);
    }
    if (auto e = RejectUnknownFields(d, {"id", "title", "text"}, path + ".")) return e;
    DocumentInput doc;
    if (auto e = ReadString(d, "id", path + ".id", true, &doc.id, kMaxIdBytes)) return e;
    if (doc.id.empty()) return BadRequest(path + ".id: expected a non-empty string", path + ".id");
    if (auto e = ReadString(d, "title", path + ".title", false, &doc.title)) return e;
    if (auto e = ReadString(d, "text", path + ".text", true, &doc.text)) return e;
    documents->push_back(std::move(doc));
  }
  std::string chunking;
  if (auto e = ReadString(request, "chunking", "chunking", false, &chunking, kMaxNameBytes)) {
    return e;
  }
  if (!chunking.empty()) {
    Result<ChunkOptions::Strategy> strategy = ParseChunkStrategy(chunking);
    if (!strategy.ok()) return ErrorFromStatus(strategy.status(), "chunking");
    options->chunking.strategy = *strategy;
  }
  return std::nullopt;
}

namespace {

nlohmann::json IndexReportJson(const IndexReport& r) {
  return {{"documents_seen", r.documents_seen},
          {"documents_added", r.documents_added},
          {"documents_replaced", r.documents_replaced},
          {"documents_unchanged", r.documents_unchanged},
          {"passages_added", r.passages_added},
          {"passages_embedded", r.passages_embedded},
          {"embedder_refitted", r.embedder_refitted},
          {"extractor", r.extractor},
          {"passages_extracted", r.passages_extracted},
          {"entities_created", r.entities_created},
          {"entities_deleted", r.entities_deleted},
          {"facts_created", r.facts_created},
          {"synonym_edges", r.synonym_edges},
          {"messages", r.messages},
          {"seconds", r.total_seconds}};
}

}  // namespace

Reply HandleInsertDocuments(Engine& engine, const nlohmann::json& request) {
  std::vector<DocumentInput> documents;
  IndexOptions options;
  if (auto e = ParseDocuments(request, &documents, &options)) return ErrorReply(*e);
  Result<IndexReport> report = engine.IndexDocuments(documents, options);
  if (!report.ok()) return ErrorReply(ErrorFromStatus(report.status()));
  return OkReply(IndexReportJson(*report));
}

Reply HandleDeleteDocument(Engine& engine, const std::string& document_id) {
  Status st = engine.DeleteDocument(document_id);
  if (!st.ok()) {
    return ErrorReply(ErrorFromStatus(st, st.code() == StatusCode::kNotFound ? "id" : ""));
  }
  return OkReply({{"deleted", document_id}});
}

}  // namespace flowrag::server
