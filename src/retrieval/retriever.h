// Retriever: the one interface every retrieval method implements, text
// baselines and graph methods alike. A retriever is a pure function of
// (snapshot, request) → ranked passages plus diagnostics (DESIGN.md).
//
// Thread-safety: Retrieve() is const and safe to call concurrently.
#ifndef FLOWRAG_RETRIEVAL_RETRIEVER_H_
#define FLOWRAG_RETRIEVAL_RETRIEVER_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/status.h"
#include "flowrag/types.h"
#include "graph/snapshot.h"

namespace flowrag {

struct RetrievalRequest {
  std::string query;
  size_t top_k = 5;
  // Per-query option overrides by name (see each method's options); may be null.
  const std::map<std::string, std::string>* params = nullptr;
};

struct RankedPassage {
  uint32_t passage = 0;  // snapshot passage index
  double score = 0.0;
};

struct RetrievalOutput {
  std::vector<RankedPassage> ranked;  // best first, at most top_k
  RetrievalDiagnostics diagnostics;
};

class Retriever {
 public:
  virtual ~Retriever() = default;
  virtual std::string_view Name() const = 0;
  virtual Result<RetrievalOutput> Retrieve(const Snapshot& snapshot,
                                           const RetrievalRequest& request) const = 0;
};

// The registry: "bm25", "dense", "hybrid". InvalidArgument (listing the known
// names) for anything else.
Result<std::unique_ptr<Retriever>> MakeRetriever(std::string_view name);
std::vector<std::string> RetrieverNames();

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_RETRIEVER_H_
