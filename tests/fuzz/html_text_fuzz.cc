// Fuzz target: the HTML text extractor (src/ingest/html_text.h
// ExtractHtmlText, DeclaredHtmlCharset), then the loader
// on the same bytes as an .html file.
//
// Input: the HTML page's bytes. Checks: extraction ends for every input (the
// libFuzzer timeout catches a loop), the output is at most about twice the
// input, a valid UTF-8 input gives valid UTF-8 text and title, the text
// never starts or ends with a break, and the loader returns a document or an
// error with a short message.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/encoding.h"
#include "fuzz_util.h"
#include "ingest/html_text.h"
#include "ingest/loaders.h"
#include "ingest/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view html(reinterpret_cast<const char*>(data), size);
  const flowrag::HtmlText out = flowrag::ExtractHtmlText(html);
  FUZZ_CHECK(out.text.size() <= 2 * size + 8, "text longer than twice the input");
  FUZZ_CHECK(out.title.size() <= 512, "title longer than 512 bytes");
  if (flowrag::IsValidUtf8(html)) {
    FUZZ_CHECK(flowrag::IsValidUtf8(out.text), "text is not UTF-8");
    FUZZ_CHECK(flowrag::IsValidUtf8(out.title), "title is not UTF-8");
  }
  if (!out.text.empty()) {
    FUZZ_CHECK(out.text.front() != ' ' && out.text.front() != '\n', "text starts with a break");
    FUZZ_CHECK(out.text.back() != ' ' && out.text.back() != '\n', "text ends with a break");
  }
  const std::string charset = flowrag::DeclaredHtmlCharset(html);
  FUZZ_CHECK(charset.size() <= 1024, "charset longer than the sniffed prefix");
  FUZZ_CHECK(flowrag::IsValidUtf8(flowrag::Windows1252ToUtf8(html)), "windows-1252 decode");

  const std::string path = flowrag::fuzz::ScratchDir() + "/html_text-in.html";
  flowrag::fuzz::WriteBytes(path, html);
  flowrag::Status st = flowrag::LoadSource(path, {}, [](flowrag::RawDocument&& doc) {
    FUZZ_CHECK(flowrag::IsValidUtf8(doc.text), "document text is not UTF-8");
    FUZZ_CHECK(!doc.title.empty(), "document without a title");
    return flowrag::Status::Ok();
  });
  if (!st.ok()) FUZZ_CHECK_ERROR(st);
  return 0;
}
