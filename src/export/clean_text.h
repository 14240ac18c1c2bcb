// Text made safe for the export formats: valid UTF-8 in, valid UTF-8 out.
//
// CleanUtf8: ill-formed UTF-8 (a stray continuation byte, a sequence cut
// short, an overlong form, a surrogate, a value above U+10FFFF) becomes
// U+FFFD, one per maximal ill-formed subpart; everything else is kept.
// AppendXmlText: CleanUtf8, then characters XML 1.0 forbids (C0 controls
// other than tab, LF and CR; U+FFFE, U+FFFF) become U+FFFD, and & < > " '
// and CR become character references, so the result is valid element
// content and attribute value alike and reads back unchanged (CR included).
//
// Each replaced character is counted in `*replaced` (may be null).
// Thread-safety: pure functions. Complexity: linear in the input.
#ifndef FLOWRAG_EXPORT_CLEAN_TEXT_H_
#define FLOWRAG_EXPORT_CLEAN_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace flowrag {

void AppendCleanUtf8(std::string* out, std::string_view text, size_t* replaced);
std::string CleanUtf8(std::string_view text, size_t* replaced);
void AppendXmlText(std::string* out, std::string_view text, size_t* replaced);

}  // namespace flowrag

#endif  // FLOWRAG_EXPORT_CLEAN_TEXT_H_
