// HTML → plain text: a small tolerant parser for indexing web pages.
//
// It is not a conforming HTML5 parser (no tree, no error recovery by the
// adoption agency); it reads the token stream once and keeps what a reader
// sees:
//   - Text outside tags, with character references decoded: the named ones
//     of HTML 4 (Latin-1, symbols, punctuation, a few Greek letters and
//     arrows) when closed by ';', decimal "&#65;" and hexadecimal "&#x41;"
//     ones with or without ';' (0, surrogates and values above U+10FFFF
//     become U+FFFD; 0x80-0x9F are read as windows-1252, as browsers do).
//     Unknown or malformed references stay as written.
//   - Whitespace collapsed as a browser does (runs become one space), except
//     inside <pre>, <textarea> and <listing>, where it is kept.
//   - Block elements become breaks: a paragraph break (blank line) around
//     p, h1-h6, pre, blockquote, ul, ol, dl, table, section, article,
//     header, footer, nav, aside, main, figure, form, fieldset, details,
//     address, hr; a line break around div, li, dt, dd, tr, caption,
//     figcaption, summary, legend, option and at br; a space between table
//     cells. Breaks never start or end the text, and never repeat.
//   - Dropped with their content: script, style, noscript, template, head's
//     title (kept apart as the title), svg and math; comments, doctypes,
//     processing instructions and CDATA sections. Dropped elements end at
//     their matching end tag (ASCII case-insensitive) or at the end of input.
//   - Title: the text of the first <title>, else of the first <h1>
//     (collapsed, references decoded); empty when neither has text.
// Malformed input degrades: a '<' that does not start a tag is text, an
// unterminated tag, comment or quoted attribute runs to the end of input,
// unknown tags are ignored (their content kept). Any byte string is
// accepted; invalid UTF-8 is passed through unchanged (the loader checks it).
//
// Complexity: O(n) time in the input length (every scan moves forward; a
// quote that never closes is searched for once), O(n) memory; the output
// is at most about 2n bytes (a numeric reference expands to at most 4
// bytes, a named one to at most 3).
// Thread-safety: pure function.
#ifndef FLOWRAG_INGEST_HTML_TEXT_H_
#define FLOWRAG_INGEST_HTML_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace flowrag {

struct HtmlText {
  std::string title;  // <title>, else the first <h1>; "" when neither has text
  std::string text;   // the visible text, blocks separated by line breaks
};

HtmlText ExtractHtmlText(std::string_view html);

// The character encoding an HTML file declares in its first 1024 bytes
// (<meta charset="..."> or <meta http-equiv="Content-Type" content="...;
// charset=...">), lower-cased; "" when none is declared.
std::string DeclaredHtmlCharset(std::string_view html);

// True for the labels of windows-1252 (which the WHATWG encoding standard
// maps "iso-8859-1", "latin1", "us-ascii" and "windows-1252" to, among
// others); common/encoding.h's Windows1252ToUtf8 converts such bytes.
bool IsWindows1252Label(std::string_view charset);

}  // namespace flowrag

#endif  // FLOWRAG_INGEST_HTML_TEXT_H_
