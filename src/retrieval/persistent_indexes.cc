#include "retrieval/persistent_indexes.h"

#include "retrieval/fact_bm25.h"
#include "retrieval/keywords.h"
#include "retrieval/local_facts.h"

namespace flowrag {

const std::vector<const PersistentDerived*>& PersistentQueryIndexes() {
  static const std::vector<const PersistentDerived*> kIndexes = {
      &LocalFacts::Persistence(), &FactBm25::Persistence(), &EntityNameMatcher::Persistence()};
  return kIndexes;
}

}  // namespace flowrag
