# cmake -DINPUT=viewer.html -DOUTPUT=viewer_html.cc -P embed_viewer.cmake
# Writes a C++ file that defines flowrag::server::ViewerHtml() as the bytes of
# INPUT, hex-escaped (so no byte of the page needs care), in string pieces of
# 16,000 bytes.
file(READ "${INPUT}" html HEX)
string(LENGTH "${html}" hex_length)
set(body "")
set(offset 0)
set(piece 32000)  # hex digits: 16,000 bytes
while(offset LESS hex_length)
  string(SUBSTRING "${html}" ${offset} ${piece} hex)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "\\\\x\\1" escaped "${hex}")
  string(APPEND body "    \"${escaped}\"\n")
  math(EXPR offset "${offset} + ${piece}")
endwhile()
file(WRITE "${OUTPUT}.tmp"
"// Generated from src/server/viewer.html by src/server/embed_viewer.cmake; do not edit.
#include \"server/viewer_page.h\"

namespace flowrag::server {

std::string_view ViewerHtml() {
  static constexpr char kHtml[] =
${body}    \"\";
  return std::string_view(kHtml, sizeof(kHtml) - 1);
}

}  // namespace flowrag::server
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
