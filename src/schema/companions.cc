// DetectCompanionLinks (schema/structural.h): A.8.2 companion sources.
#include <algorithm>

#include "schema/structural.h"

namespace flowrag {
namespace {

// "queries_metadata" is a companion of "queries" (same folder, the base name
// followed by '_', '-' or '.').
bool IsCompanionOf(const std::string& companion, const std::string& base) {
  return companion.size() > base.size() + 1 && companion.compare(0, base.size(), base) == 0 &&
         (companion[base.size()] == '_' || companion[base.size()] == '-' ||
          companion[base.size()] == '.');
}

}  // namespace

std::vector<ForeignKey> DetectCompanionLinks(const std::vector<SourceColumns>& sources,
                                             const std::vector<ForeignKey>& found,
                                             double min_containment) {
  std::vector<ForeignKey> out;
  for (const SourceColumns& c : sources) {
    for (const SourceColumns& b : sources) {
      if (!IsCompanionOf(c.name, b.name)) continue;
      const bool linked = std::any_of(found.begin(), found.end(), [&](const ForeignKey& fk) {
        return (fk.from_source == c.name && fk.to_source == b.name) ||
               (fk.from_source == b.name && fk.to_source == c.name);
      });
      if (linked) continue;
      // The implicit shared identifier: a field of the same name in both whose
      // companion values are (mostly) values of the base.
      const ForeignKey* best = nullptr;
      ForeignKey candidate;
      for (const ColumnProfile& child : c.columns) {
        if (child.counts.empty()) continue;
        for (const ColumnProfile& parent : b.columns) {
          if (parent.info.path != child.info.path || parent.counts.empty()) continue;
          size_t shared = 0;
          for (const auto& [v, n] : child.counts) shared += parent.counts.count(v);
          const double containment =
              static_cast<double>(shared) / static_cast<double>(child.counts.size());
          if (containment < min_containment) continue;
          const double overlap = static_cast<double>(shared) /
                                 static_cast<double>(std::max(child.counts.size(), parent.counts.size()));
          if (best && overlap <= best->overlap) continue;
          candidate = ForeignKey{c.name, child.info.path, b.name, parent.info.path, overlap,
                                 containment, true, std::min(0.95, 0.5 + 0.3 * overlap + 0.15),
                                 child.info.uniqueness >= 0.95 ? "1:1" : "N:1"};
          candidate.companion = true;
          best = &candidate;
        }
      }
      if (best) out.push_back(*best);
    }
  }
  return out;
}

}  // namespace flowrag
