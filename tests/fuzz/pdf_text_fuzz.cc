// Fuzz target: the PDF loader (src/ingest/pdf_text.h ExtractPdfText through
// LoadSource on a .pdf file), then page lookup (PagesOfSpan) on its text.
//
// Input: the PDF's bytes. The limits are small (50 pages, 1 MiB of text) so
// that an input declaring huge page trees stays fast. Checks: a document or
// an error with a short message naming the file; a document's text is valid
// UTF-8 with one page break per page, the last at its end.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "ingest/document.h"
#include "ingest/loaders.h"
#include "ingest/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = flowrag::fuzz::ScratchDir() + "/pdf_text-in.pdf";
  flowrag::fuzz::WriteBytes(path, std::string_view(reinterpret_cast<const char*>(data), size));
  flowrag::LoadOptions options;
  options.pdf.max_pages = 50;
  options.pdf.max_text_bytes = 1 << 20;
  flowrag::LoadReport report;
  flowrag::Status st = flowrag::LoadSource(
      path, options,
      [](flowrag::RawDocument&& doc) {
        FUZZ_CHECK(flowrag::IsValidUtf8(doc.text), "document text is not UTF-8");
        FUZZ_CHECK(flowrag::IsValidUtf8(doc.title), "title is not UTF-8");
        FUZZ_CHECK(!doc.text.empty() && doc.text.back() == flowrag::kPageBreak,
                   "text does not end with a page break");
        const std::vector<uint32_t> breaks = flowrag::PageBreaks(doc.text);
        FUZZ_CHECK(breaks.size() <= 50, "more pages than the limit");
        const flowrag::PageSpan all =
            flowrag::PagesOfSpan(breaks, 0, static_cast<uint32_t>(doc.text.size()));
        FUZZ_CHECK(all.first == 1 && all.last == static_cast<int32_t>(breaks.size()),
                   "the whole text does not span every page");
        return flowrag::Status::Ok();
      },
      &report);
  if (!st.ok()) {
    FUZZ_CHECK_ERROR(st);
    FUZZ_CHECK(st.message().find("pdf_text-in.pdf") != std::string::npos,
               "error does not name the file: " + st.message());
  }
  return 0;
}
