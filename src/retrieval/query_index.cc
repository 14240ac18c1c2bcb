#include "retrieval/query_index.h"

#include "common/stopwatch.h"

namespace flowrag {

std::shared_ptr<const GraphQueryIndex> GraphQueryIndex::For(const Snapshot& snapshot) {
  static const char kTag = 0;
  if (snapshot.graph() == nullptr) return std::make_shared<GraphQueryIndex>();
  return std::static_pointer_cast<const GraphQueryIndex>(
      snapshot.Derived(&kTag, [&]() -> std::shared_ptr<const void> {
        auto index = std::make_shared<GraphQueryIndex>();
        index->Build(snapshot);
        return index;
      }));
}

void GraphQueryIndex::Build(const Snapshot& snapshot) {
  const auto start = SteadyClock::now();
  const KnowledgeGraph& g = *snapshot.graph();
  graph_ = &g;
  names_ = EntityNameMatcher::For(snapshot);
  entity_vectors_ = g.entity_vectors();
  build_seconds_ = SecondsSince(start);
}

}  // namespace flowrag
