// Names as documents write them: whitespace collapsed, and the other names a
// document title goes by. Shared by the offline extractor (a title and its
// aliases name the title entity) and by retrieval's exact name lookup
// (keywords.h: a query naming "Merrow Coast" finds "The Merrow Coast"), so
// that the two agree on what a title is called.
//
// Pure functions; thread-safe; linear in the input.
#ifndef FLOWRAG_LEXICAL_NAMES_H_
#define FLOWRAG_LEXICAL_NAMES_H_

#include <string>
#include <string_view>
#include <vector>

namespace flowrag {

// Runs of ASCII whitespace become one space; leading and trailing ones go.
std::string CollapseSpaces(std::string_view s);

// Other names a document title goes by: without its trailing parenthetical
// disambiguation ("Theodred II (Bishop of Elmham)" → "Theodred II") and
// without a leading "The" ("The Merrow Coast" → "Merrow Coast"), alone and
// combined. Only forms whose NameKey (aho_corasick.h) differs from the
// title's and from each other's; in that order.
std::vector<std::string> TitleAliases(std::string_view title);

}  // namespace flowrag

#endif  // FLOWRAG_LEXICAL_NAMES_H_
