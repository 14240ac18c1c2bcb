#include "session/read_session.h"

#include <algorithm>
#include <charconv>

#include "common/encoding.h"
#include "export/graph_view.h"
#include "retrieval/params.h"
#include "session/subgraph.h"

namespace flowrag {

std::string_view ResolveMethod(const Snapshot& snapshot, std::string_view method,
                               const std::string& default_method) {
  if (method != kAutoMethod) return method;
  if (!default_method.empty()) return default_method;
  const KnowledgeGraph* g = snapshot.graph();
  const bool graph = g != nullptr && g->num_entities() > 0;
  return graph ? "qafd" : "hybrid";
}

Result<std::unique_ptr<SessionServices>> MakeSessionServices(const EngineOptions& options) {
  auto services = std::make_unique<SessionServices>();
  services->default_method = options.default_method;
  for (const std::string& name : RetrieverNames()) {
    FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<Retriever> retriever, MakeRetriever(name));
    if (!options.default_params.empty()) {
      // The defaults this method reads.
      std::vector<MethodOption> reads;
      ParamReader catalog(&reads);
      FLOWRAG_RETURN_IF_ERROR(retriever->ReadOptions(catalog));
      for (const MethodOption& o : reads) {
        auto d = options.default_params.find(o.name);
        if (d != options.default_params.end()) services->method_defaults[name][o.name] = d->second;
      }
    }
    services->retrievers.emplace(name, std::move(retriever));
  }
  return services;
}

Result<RetrievalResult> ReadSession::Query(std::string_view question,
                                           const QueryOptions& options) const {
  ChatModel* chat = nullptr;
  if (services_->chat) {
    FLOWRAG_ASSIGN_OR_RETURN(chat, services_->chat());
  }
  return QueryWith(question, options, chat);
}

Result<RetrievalResult> ReadSession::QueryWith(std::string_view question,
                                               const QueryOptions& options,
                                               ChatModel* chat) const {
  const Snapshot& snap = *snapshot_;
  const std::string method(ResolveMethod(snap, options.method, services_->default_method));
  auto it = services_->retrievers.find(method);
  if (it == services_->retrievers.end()) {
    std::string known(kAutoMethod);
    for (const std::string& name : RetrieverNames()) known += ", " + name;
    return Status::InvalidArgument("unknown method \"" + EscapeForMessage(method, 60) +
                                   "\" (known: " + known + ")");
  }
  if (options.top_k == 0) return Status::InvalidArgument("top_k: expected a positive number");
  RetrievalRequest request;
  request.query = std::string(question);
  // As many more as may be hidden, so that top_k remain.
  request.top_k = options.top_k + (tombstones_ != nullptr ? tombstones_->passages.size() : 0);
  std::map<std::string, std::string> params;
  const auto defaults = services_->method_defaults.find(method);
  if (defaults != services_->method_defaults.end()) {
    params = defaults->second;
    for (const auto& [k, v] : options.params) params[k] = v;  // the query's own win
  }
  request.params = defaults == services_->method_defaults.end() ? &options.params : &params;
  request.chat = chat;
  request.explain = options.explain;
  FLOWRAG_ASSIGN_OR_RETURN(RetrievalOutput out, it->second->Retrieve(snap, request));
  if (tombstones_ != nullptr) HideTombstoned(*tombstones_, options.top_k, &out);
  RetrievalResult result;
  result.method = method;
  result.diagnostics = std::move(out.diagnostics);
  if (snap.graph() != nullptr) DescribeSubgraph(snap, out, &result);
  result.passages.reserve(out.ranked.size());
  for (const RankedPassage& r : out.ranked) result.passages.push_back(snap.Scored(r.passage, r.score));
  return result;
}

namespace {

// `text`: the document's text (Snapshot::DocumentText), or empty when the
// description goes without it.
StoredDocument Describe(const SnapshotDocument& d, std::string_view text) {
  StoredDocument out;
  out.id = d.external_id;
  out.title = d.title;
  out.bytes = d.text.size();  // its length, known without reading it
  out.text = text;
  return out;
}

// A cursor is the decimal store id of the last document of a page.
Result<int64_t> ParseCursor(std::string_view cursor) {
  if (cursor.empty()) return int64_t{0};
  int64_t after = 0;
  const auto [end, ec] = std::from_chars(cursor.data(), cursor.data() + cursor.size(), after);
  if (ec != std::errc() || end != cursor.data() + cursor.size() || after < 0) {
    return Status::InvalidArgument("cursor \"" + EscapeForMessage(cursor, 40) +
                                   "\": not a cursor of this store's document list");
  }
  return after;
}

}  // namespace

Result<DocumentPage> ReadSession::ListDocuments(std::string_view cursor, size_t limit) const {
  FLOWRAG_ASSIGN_OR_RETURN(const int64_t after, ParseCursor(cursor));
  if (limit == 0) return Status::InvalidArgument("limit: expected at least 1");
  const SnapshotDocuments& docs = snapshot_->documents();  // in store id order
  auto it = std::upper_bound(docs.begin(), docs.end(), after,
                             [](int64_t id, const SnapshotDocument& d) { return id < d.id; });
  DocumentPage page;
  for (; it != docs.end() && page.documents.size() < limit; ++it) {
    if (Hidden(static_cast<uint32_t>(it - docs.begin()))) continue;
    page.documents.push_back(Describe(*it, /*text=*/""));
  }
  if (it != docs.end()) page.next_cursor = std::to_string((*std::prev(it)).id);
  return page;
}

Result<StoredDocument> ReadSession::GetDocument(std::string_view id) const {
  const SnapshotDocuments& docs = snapshot_->documents();
  for (uint32_t d = 0; d < docs.size(); ++d) {
    if (docs[d].external_id == id && !Hidden(d)) return Describe(docs[d], snapshot_->DocumentText(d));
  }
  return Status::NotFound("document \"" + EscapeForMessage(id, 80) + "\": no such document");
}

std::shared_ptr<const ReadSession> ReadSession::WithTombstone(std::string_view document_id) const {
  std::shared_ptr<const Tombstones> hidden =
      AddTombstone(*snapshot_, tombstones_.get(), document_id);
  if (hidden == nullptr) return nullptr;
  return std::make_shared<const ReadSession>(snapshot_, services_, std::move(hidden));
}

bool ReadSession::Hidden(uint32_t document) const {
  return tombstones_ != nullptr && tombstones_->HidesDocument(document);
}

std::shared_ptr<const GraphView> ReadSession::Graph() const { return MakeGraphView(snapshot_); }

Result<FloatMatrix> ReadSession::Embed(const std::vector<std::string>& texts) const {
  return snapshot_->embedder()->Embed(texts);
}

void ReadSession::FillGraphStats(GraphStats* g) const {
  const KnowledgeGraph* kg = snapshot_->graph();
  g->nodes["Passage"] = static_cast<int64_t>(snapshot_->num_passages());
  if (kg == nullptr) return;
  g->nodes["Entity"] = static_cast<int64_t>(kg->num_entities());
  g->nodes["EntityDescription"] = static_cast<int64_t>(kg->num_descriptions());
  g->nodes["Fact"] = static_cast<int64_t>(kg->num_facts());
  for (EdgeKind k : {EdgeKind::kMentions, EdgeKind::kRelatedTo, EdgeKind::kDescribes,
                     EdgeKind::kSynonym}) {
    g->edges[std::string(EdgeKindName(k))] = static_cast<int64_t>(kg->NumEdges(k));
  }
  const Csr& rel = kg->Edges(EdgeKind::kRelatedTo);
  std::vector<int64_t> degrees(kg->num_entities());
  size_t isolated = 0;
  for (uint32_t e = 0; e < kg->num_entities(); ++e) {
    degrees[e] = static_cast<int64_t>(rel.Degree(kg->EntityNode(e)));
    isolated += degrees[e] == 0;
  }
  const double n = static_cast<double>(std::max<size_t>(1, kg->num_entities()));
  g->isolated_ratio = static_cast<double>(isolated) / n;
  g->average_degree = 2.0 * static_cast<double>(kg->NumEdges(EdgeKind::kRelatedTo)) / n;
  std::sort(degrees.begin(), degrees.end());
  if (!degrees.empty()) {
    auto at = [&](double q) {
      return degrees[std::min(degrees.size() - 1, static_cast<size_t>(q * (degrees.size() - 1)))];
    };
    g->degree_min = degrees.front();
    g->degree_median = at(0.5);
    g->degree_p90 = at(0.9);
    g->degree_p99 = at(0.99);
    g->degree_max = degrees.back();
  }
  g->memory_bytes = static_cast<int64_t>(kg->MemoryBytes());
}

}  // namespace flowrag
