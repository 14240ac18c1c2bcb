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

// A name's key between spaces (" " + EntityKey(name) + " "): the part of
// FactText that depends on one name, which AssignFactTexts computes once per
// entity and relation rather than once per fact.
inline std::string PaddedKey(std::string_view name) {
  std::string key = " ";
  key += EntityKey(name);
  key += ' ';
  return key;
}

// FactText of names whose PaddedKey is given with each.
inline std::string FactTextOfKeys(std::string_view subject, std::string_view subject_key,
                                  std::string_view relation, std::string_view relation_key,
                                  std::string_view object, std::string_view object_key) {
  // A padded key of two characters is an empty key.
  if (subject_key.size() > 2 && object_key.size() > 2 &&
      relation_key.find(subject_key) != std::string_view::npos &&
      relation_key.find(object_key) != std::string_view::npos) {
    return std::string(relation);
  }
  std::string text;
  text.reserve(subject.size() + relation.size() + object.size() + 2);
  text += subject;
  text += ' ';
  text += relation;
  text += ' ';
  text += object;
  return text;
}

// A fact "subject relation object". When the relation text already names both
// entities (the offline extractor's relation is the whole sentence), the fact
// is that text, so sentence facts share one vector with their relation.
inline std::string FactText(std::string_view subject, std::string_view relation,
                            std::string_view object) {
  return FactTextOfKeys(subject, PaddedKey(subject), relation, PaddedKey(relation), object,
                        PaddedKey(object));
}

}  // namespace flowrag

#endif  // FLOWRAG_GRAPH_GRAPH_TEXTS_H_
