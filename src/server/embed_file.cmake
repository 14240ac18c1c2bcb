# cmake -DINPUT=file -DOUTPUT=file.cc -DSYMBOL=Name -DHEADER=server/x.h -P embed_file.cmake
# Writes a C++ file that defines std::string_view flowrag::server::SYMBOL()
# as the bytes of INPUT, hex-escaped (so no byte needs care), in string
# pieces of 16,000 bytes (the viewer page, cytoscape: viewer.cmake).
file(READ "${INPUT}" content HEX)
string(LENGTH "${content}" hex_length)
set(body "")
set(offset 0)
set(piece 32000)  # hex digits: 16,000 bytes
while(offset LESS hex_length)
  string(SUBSTRING "${content}" ${offset} ${piece} hex)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "\\\\x\\1" escaped "${hex}")
  string(APPEND body "    \"${escaped}\"\n")
  math(EXPR offset "${offset} + ${piece}")
endwhile()
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${INPUT} by src/server/embed_file.cmake; do not edit.
#include \"${HEADER}\"

namespace flowrag::server {

std::string_view ${SYMBOL}() {
  static constexpr char kBytes[] =
${body}    \"\";
  return std::string_view(kBytes, sizeof(kBytes) - 1);
}

}  // namespace flowrag::server
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
