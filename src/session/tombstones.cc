#include "session/tombstones.h"

#include <algorithm>

namespace flowrag {

bool Tombstones::HidesDocument(uint32_t d) const {
  return std::binary_search(documents.begin(), documents.end(), d);
}

bool Tombstones::HidesPassage(uint32_t p) const {
  return std::binary_search(passages.begin(), passages.end(), p);
}

std::shared_ptr<const Tombstones> AddTombstone(const Snapshot& snapshot, const Tombstones* base,
                                               std::string_view document_id) {
  const SnapshotDocuments& docs = snapshot.documents();
  uint32_t doc = 0;
  while (doc < docs.size() && docs[doc].external_id != document_id) ++doc;
  if (doc == docs.size()) return nullptr;
  auto out = std::make_shared<Tombstones>(base != nullptr ? *base : Tombstones());
  if (out->HidesDocument(doc)) return out;
  out->documents.insert(std::upper_bound(out->documents.begin(), out->documents.end(), doc), doc);
  for (uint32_t p = 0; p < snapshot.num_passages(); ++p) {
    if (snapshot.passage(p).document == doc) out->passages.push_back(p);
  }
  std::sort(out->passages.begin(), out->passages.end());
  return out;
}

void HideTombstoned(const Tombstones& tombstones, size_t top_k, RetrievalOutput* out) {
  auto hidden_node = [&](uint32_t node) { return tombstones.HidesPassage(node); };
  std::erase_if(out->ranked, [&](const RankedPassage& r) { return hidden_node(r.passage); });
  if (out->ranked.size() > top_k) out->ranked.resize(top_k);
  std::erase_if(out->seeds, [&](const NodeScore& s) { return hidden_node(s.node); });
  std::erase_if(out->node_scores, [&](const NodeScore& s) { return hidden_node(s.node); });
  std::erase_if(out->subgraph,
                [&](const TouchedEdge& e) { return hidden_node(e.from) || hidden_node(e.to); });
  std::erase_if(out->paths, [&](const ExplanationPath& p) {
    return hidden_node(p.passage) || std::any_of(p.nodes.begin(), p.nodes.end(), hidden_node);
  });
}

}  // namespace flowrag
