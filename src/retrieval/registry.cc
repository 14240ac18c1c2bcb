#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "retrieval/one_hop_retriever.h"
#include "retrieval/ppr_retriever.h"
#include "retrieval/qafd_retriever.h"
#include "retrieval/retriever.h"
#include "retrieval/sa_retriever.h"
#include "retrieval/semflow_retriever.h"
#include "retrieval/text_retrievers.h"

namespace flowrag {
namespace {

using Factory = std::function<std::unique_ptr<Retriever>()>;

const std::vector<std::pair<std::string, Factory>>& Registry() {
  static const auto* registry = new std::vector<std::pair<std::string, Factory>>{
      {"bm25", [] { return std::make_unique<Bm25Retriever>(); }},
      {"dense", [] { return std::make_unique<DenseRetriever>(); }},
      {"hybrid", [] { return std::make_unique<HybridRetriever>(); }},
      {"sa", [] { return std::make_unique<SaRetriever>(); }},
      {"qafd", [] { return std::make_unique<QafdRetriever>(); }},
      {"onehop", [] { return std::make_unique<OneHopRetriever>(); }},
      {"ppr", [] { return std::make_unique<PprRetriever>(); }},
      {"semflow", [] { return std::make_unique<SemFlowRetriever>(); }},
  };
  return *registry;
}

}  // namespace

Result<std::unique_ptr<Retriever>> MakeRetriever(std::string_view name) {
  for (const auto& [n, factory] : Registry()) {
    if (n == name) return factory();
  }
  std::string known;
  for (const auto& [n, f] : Registry()) known += (known.empty() ? "" : ", ") + n;
  return Status::InvalidArgument("unknown method \"" + std::string(name) + "\" (known: " + known +
                                 ")");
}

Result<std::unique_ptr<Retriever>> MakeRetriever(
    std::string_view name, const std::map<std::string, std::string>& defaults) {
  FLOWRAG_ASSIGN_OR_RETURN(std::unique_ptr<Retriever> retriever, MakeRetriever(name));
  (void)retriever->Configure(defaults);  // a bad default fails the queries that read it
  return retriever;
}

std::vector<std::string> RetrieverNames() {
  std::vector<std::string> names;
  for (const auto& [n, f] : Registry()) names.push_back(n);
  return names;
}

}  // namespace flowrag
