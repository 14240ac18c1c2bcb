// Small PDFs written byte by byte for the tests: one Helvetica text object
// per page (a standard font, nothing embedded), uncompressed content
// streams, an optional /Title in the document information dictionary and a
// cross-reference table with exact offsets (bench/pdf_pages.py writes the
// same layout). A page may instead hold only an image (a "scanned" page
// without a text layer) or nothing at all.
#ifndef FLOWRAG_TESTS_PDF_FIXTURES_H_
#define FLOWRAG_TESTS_PDF_FIXTURES_H_

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace flowrag::testing {

struct PdfPage {
  std::vector<std::string> lines;  // ASCII text lines; none: a page without text
  bool image = false;              // draw a 2x2 grey image (a scan without text)
  std::string content;             // when set: the page's content stream as is
};

inline std::string PdfString(const std::string& s) {
  std::string out = "(";
  for (char c : s) {
    if (c == '(' || c == ')' || c == '\\') out += '\\';
    out += c;
  }
  return out + ")";
}

inline std::string MakePdf(const std::vector<PdfPage>& pages, const std::string& title = "") {
  std::map<int, std::string> objects;
  const int n = static_cast<int>(pages.size());
  objects[1] = "<< /Type /Catalog /Pages 2 0 R >>";
  std::string kids;
  for (int i = 0; i < n; ++i) kids += (i ? " " : "") + std::to_string(4 + 2 * i) + " 0 R";
  objects[2] = "<< /Type /Pages /Kids [" + kids + "] /Count " + std::to_string(n) + " >>";
  objects[3] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>";
  for (int i = 0; i < n; ++i) {
    std::string stream = pages[i].content;
    if (pages[i].image) {
      stream += "q 200 0 0 200 100 500 cm BI /W 2 /H 2 /CS /G /BPC 8 ID \x40\x80\xc0\xff EI Q\n";
    }
    if (!pages[i].lines.empty()) {
      stream += "BT\n/F1 11 Tf\n14 TL\n56 780 Td\n";
      for (size_t l = 0; l < pages[i].lines.size(); ++l) {
        stream += (l ? "T* " : "") + PdfString(pages[i].lines[l]) + " Tj\n";
      }
      stream += "ET";
    }
    objects[4 + 2 * i] =
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R "
        ">> >> /Contents " +
        std::to_string(5 + 2 * i) + " 0 R >>";
    objects[5 + 2 * i] =
        "<< /Length " + std::to_string(stream.size()) + " >>\nstream\n" + stream + "\nendstream";
  }
  int info = 0;
  if (!title.empty()) {
    info = 4 + 2 * n;
    objects[info] = "<< /Title " + PdfString(title) + " >>";
  }
  std::string out = "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n";
  std::map<int, size_t> offsets;
  for (const auto& [num, body] : objects) {
    offsets[num] = out.size();
    out += std::to_string(num) + " 0 obj\n" + body + "\nendobj\n";
  }
  const size_t xref = out.size();
  const int size = objects.rbegin()->first + 1;
  out += "xref\n0 " + std::to_string(size) + "\n0000000000 65535 f \n";
  for (int num = 1; num < size; ++num) {
    char line[32];
    std::snprintf(line, sizeof(line), "%010zu 00000 n \n", offsets[num]);
    out += line;
  }
  out += "trailer\n<< /Size " + std::to_string(size) + " /Root 1 0 R" +
         (info ? " /Info " + std::to_string(info) + " 0 R" : "") + " >>\nstartxref\n" +
         std::to_string(xref) + "\n%%EOF\n";
  return out;
}

}  // namespace flowrag::testing

#endif  // FLOWRAG_TESTS_PDF_FIXTURES_H_
