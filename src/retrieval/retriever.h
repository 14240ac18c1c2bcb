// Retriever: the one interface every retrieval method implements, text
// baselines and graph methods alike. A retriever is a pure function of
// (snapshot, its configured options, request) → ranked passages plus
// diagnostics (DESIGN.md). The graph methods are seeding (seeding.h) +
// an algorithm (graph_algo/) + ranking.
//
// Thread-safety: Configure() before the retriever is shared; Retrieve() is
// const and safe to call concurrently.
#ifndef FLOWRAG_RETRIEVAL_RETRIEVER_H_
#define FLOWRAG_RETRIEVAL_RETRIEVER_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/status.h"
#include "flowrag/types.h"
#include "graph/knowledge_graph.h"
#include "graph/snapshot.h"
#include "llm/chat_model.h"

namespace flowrag {

class ParamReader;

struct RetrievalRequest {
  std::string query;
  size_t top_k = 5;
  // Per-query option overrides by name (see each method's options), applied
  // over the retriever's configured defaults (Retriever::Configure); may be
  // null.
  const std::map<std::string, std::string>* params = nullptr;
  // The configured chat model for the query-time LLM steps (keywords,
  // decomposition, fact filter; retrieval/query_llm.h); null = offline.
  ChatModel* chat = nullptr;
  // Compute RetrievalOutput::paths and ::subgraph (QueryOptions::explain).
  // Without it graph methods still report seeds and node_scores.
  bool explain = false;
};

struct RankedPassage {
  uint32_t passage = 0;  // snapshot passage index
  double score = 0.0;
};

// Graph methods also report how they found their passages. Node ids are
// KnowledgeGraph node ids (passages are nodes [0, P)).
struct NodeScore {
  uint32_t node = 0;
  double score = 0.0;  // mass (QAFD), activation (SA), probability (PPR)
};

struct TouchedEdge {
  uint32_t from = 0, to = 0;
  EdgeKind kind = EdgeKind::kMentions;
  double weight = 0.0;  // the (query-aware) weight the method used
  double flow = 0.0;    // flow / activation / probability mass carried
};

// A path from a seed to a returned passage, seed first.
struct ExplanationPath {
  uint32_t passage = 0;  // snapshot passage index
  std::vector<uint32_t> nodes;
  double score = 0.0;
};

struct RetrievalOutput {
  std::vector<RankedPassage> ranked;  // best first, at most top_k
  RetrievalDiagnostics diagnostics;
  // Graph methods only (empty for bm25/dense/hybrid):
  std::vector<NodeScore> seeds;        // with their seed weights
  std::vector<NodeScore> node_scores;  // every node the method scored, best first
  std::vector<TouchedEdge> subgraph;   // edges the method used
  std::vector<ExplanationPath> paths;  // for the returned passages
  std::vector<std::string> keywords;   // query keywords / sub-queries used
  std::vector<std::string> context;    // extra context texts (SA-RAG: relation texts above τr)
};

class Retriever {
 public:
  virtual ~Retriever() = default;
  virtual std::string_view Name() const = 0;
  virtual Result<RetrievalOutput> Retrieve(const Snapshot& snapshot,
                                           const RetrievalRequest& request) const = 0;
  // Reads every per-query option this method knows, at its defaults, from
  // `reader`: with a catalog reader (retrieval/params.h) that lists them
  // (Engine::MethodOptions).
  virtual Status ReadOptions(ParamReader& reader) const = 0;
  // Parses, once, the keys of `defaults` this method reads (the configured
  // defaults, EngineOptions::default_params; other methods' keys are
  // ignored) into its typed options: afterwards RetrievalRequest::params
  // need hold only a query's own overrides, and a request without any
  // parses nothing. A value that does not parse is returned here and fails
  // every query that does not override it, with the same message
  // (retrieval/options_retriever.h). Not thread-safe: call it before the
  // retriever is shared.
  virtual Status Configure(const std::map<std::string, std::string>& defaults) = 0;
};

// The registry: "bm25", "dense", "hybrid", "sa", "qafd", "onehop", "ppr",
// "semflow", each at its own defaults. InvalidArgument (listing the known
// names) for anything else.
Result<std::unique_ptr<Retriever>> MakeRetriever(std::string_view name);
// The same, configured with `defaults` (Retriever::Configure; a default that
// does not parse fails the queries that read it, not this call).
Result<std::unique_ptr<Retriever>> MakeRetriever(
    std::string_view name, const std::map<std::string, std::string>& defaults);
std::vector<std::string> RetrieverNames();

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_RETRIEVER_H_
