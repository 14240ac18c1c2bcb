// The texts that represent graph elements in embedding space. The engine
// embeds exactly these (and caches them by text hash) and the snapshot looks
// them up the same way, so both sides must use these functions.
#ifndef FLOWRAG_GRAPH_GRAPH_TEXTS_H_
#define FLOWRAG_GRAPH_GRAPH_TEXTS_H_

#include <string>
#include <string_view>

#include "common/text.h"

namespace flowrag {

// An entity is embedded by its canonical name.
inline std::string EntityText(std::string_view name) { return std::string(name); }

// A fact "subject relation object". When the relation text already names both
// entities (the offline extractor's relation is the whole sentence), the fact
// is that text, so sentence facts share one vector with their relation.
inline std::string FactText(std::string_view subject, std::string_view relation,
                            std::string_view object) {
  const std::string rel = " " + EntityKey(relation) + " ";
  const std::string s = EntityKey(subject), o = EntityKey(object);
  if (!s.empty() && !o.empty() && rel.find(" " + s + " ") != std::string::npos &&
      rel.find(" " + o + " ") != std::string::npos) {
    return std::string(relation);
  }
  std::string text(subject);
  text += ' ';
  text += relation;
  text += ' ';
  text += object;
  return text;
}

}  // namespace flowrag

#endif  // FLOWRAG_GRAPH_GRAPH_TEXTS_H_
