// PDF and HTML ingestion: the loaders (src/ingest/loaders.h), the PDF text
// reader (pdf_text.h), the HTML text extractor (html_text.h) and page
// lookup (document.h). The engine side (pages in passages, citations "p. N")
// is in pdf_pages_engine_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ingest/chunker.h"
#include "ingest/document.h"
#include "ingest/html_text.h"
#include "ingest/loaders.h"
#include "ingest/pdf_text.h"
#include "ingest/utf8.h"
#include "pdf_fixtures.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using testing::MakePdf;
using testing::PdfPage;
using testing::TempDir;
using testing::WriteFile;

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << text << "\"\n  does not contain \"" << part << "\"";
}
#define EXPECT_CONTAINS(text, part) EXPECT_TRUE(Contains((text), (part)))

const std::string kEncryptedPdf = std::string(FLOWRAG_TESTDATA_DIR) + "/pdf/encrypted.pdf";

std::vector<std::string> SplitPages(const std::string& text) {
  std::vector<std::string> pages;
  size_t start = 0;
  for (size_t at = text.find(kPageBreak); at != std::string::npos;
       at = text.find(kPageBreak, start)) {
    pages.push_back(text.substr(start, at - start));
    start = at + 1;
  }
  EXPECT_EQ(start, text.size()) << "text after the last page break";
  return pages;
}

std::vector<PdfPage> ThreePages() {
  return {{{"Chapter one: the Ostrel valley.", "The river rises near Wrenfield."}},
          {{"Chapter two: the Brannock lens.", "It was ground in 1881."}},
          {{"Chapter three: the harbour.", "Hollin Bay Athletic was founded in 1902."}}};
}

// ---------------------------------------------------------------------------
// Page lookup.

TEST(PageSpanTest, CountsBreaksBeforeEachEnd) {
  const std::string text = "one\n\ftwo\n\f\fthree\n\f";  // page 3 is empty
  const std::vector<uint32_t> breaks = PageBreaks(text);
  ASSERT_EQ(breaks.size(), 4u);
  EXPECT_EQ(PagesOfSpan(breaks, 0, 3).first, 1);
  EXPECT_EQ(PagesOfSpan(breaks, 0, 3).last, 1);
  const PageSpan two = PagesOfSpan(breaks, 5, 8);  // "two"
  EXPECT_EQ(two.first, 2);
  EXPECT_EQ(two.last, 2);
  const PageSpan across = PagesOfSpan(breaks, 0, 8);  // "one\n\ftwo"
  EXPECT_EQ(across.first, 1);
  EXPECT_EQ(across.last, 2);
  const size_t three = text.find("three");
  EXPECT_EQ(PagesOfSpan(breaks, three, three + 5).first, 4);
  // The whole text (ending on its last break) spans every page, no more.
  const PageSpan all = PagesOfSpan(breaks, 0, static_cast<uint32_t>(text.size()));
  EXPECT_EQ(all.first, 1);
  EXPECT_EQ(all.last, 4);
  EXPECT_EQ(PagesOfSpan({}, 0, 10).first, 0);  // no pages
}

// ---------------------------------------------------------------------------
// PDF.

class PdfLoaderTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& bytes) {
    WriteFile(dir_.File(name), bytes);
    return dir_.File(name);
  }
  TempDir dir_;
};

TEST_F(PdfLoaderTest, PagesInOrderEachFollowedByAPageBreak) {
  const std::string path = Write("report.pdf", MakePdf(ThreePages(), "Valley Survey 1902"));
  ASSERT_EQ(DetectSourceKind(path).value(), SourceKind::kPdf);
  auto docs = LoadAll(path);
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  ASSERT_EQ(docs->size(), 1u);
  const RawDocument& d = docs->front();
  EXPECT_EQ(d.external_id, "report.pdf");
  EXPECT_EQ(d.title, "Valley Survey 1902");
  EXPECT_EQ(d.source, path);
  EXPECT_TRUE(IsValidUtf8(d.text));
  const std::vector<std::string> pages = SplitPages(d.text);
  ASSERT_EQ(pages.size(), 3u);
  EXPECT_CONTAINS(pages[0], "The river rises near Wrenfield.");
  EXPECT_CONTAINS(pages[1], "It was ground in 1881.");
  EXPECT_CONTAINS(pages[2], "Hollin Bay Athletic was founded in 1902.");
  // Reading order within a page: the heading line before the body line.
  EXPECT_LT(pages[1].find("Chapter two"), pages[1].find("ground in 1881"));
}

TEST_F(PdfLoaderTest, TwoColumnsComeInReadingOrder) {
  // The content stream draws the right column first and interleaves the
  // lines; reading order is the left column, then the right one.
  std::string content = "BT /F1 11 Tf 14 TL\n";
  for (int line = 0; line < 6; ++line) {
    const int y = 780 - 14 * line;
    content += "1 0 0 1 320 " + std::to_string(y) + " Tm (Right column line " +
               std::to_string(line + 1) + " of the second story.) Tj\n";
    content += "1 0 0 1 56 " + std::to_string(y) + " Tm (Left column line " +
               std::to_string(line + 1) + " of the first story.) Tj\n";
  }
  content += "ET";
  auto docs = LoadAll(Write("columns.pdf", MakePdf({PdfPage{{}, false, content}})));
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  const std::string& text = docs->front().text;
  const size_t left_last = text.find("Left column line 6");
  const size_t right_first = text.find("Right column line 1");
  ASSERT_NE(left_last, std::string::npos) << text;
  ASSERT_NE(right_first, std::string::npos) << text;
  EXPECT_LT(left_last, right_first) << text;
  EXPECT_LT(text.find("Left column line 1"), text.find("Left column line 2")) << text;
}

TEST_F(PdfLoaderTest, ChunksKnowTheirPages) {
  const std::string path = Write("report.pdf", MakePdf(ThreePages()));
  auto docs = LoadAll(path);
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  ChunkOptions small;
  small.window_words = 6;
  small.overlap_words = 0;
  const std::string& text = docs->front().text;
  const std::vector<uint32_t> breaks = PageBreaks(text);
  bool saw_page3 = false;
  for (const Chunk& c : ChunkText(text, small)) {
    const PageSpan span = PagesOfSpan(breaks, c.begin, c.end);
    // Independently: one more than the page breaks before each end.
    const auto breaks_before = [&](size_t offset) {
      return static_cast<int32_t>(std::count(text.begin(), text.begin() + offset, kPageBreak));
    };
    EXPECT_EQ(span.first, 1 + breaks_before(c.begin)) << c.text;
    EXPECT_EQ(span.last, 1 + breaks_before(c.end)) << c.text;
    if (c.text.find("1881") != std::string::npos) {
      EXPECT_LE(span.first, 2) << c.text;
      EXPECT_GE(span.last, 2) << c.text;
    }
    if (c.text.find("Hollin") != std::string::npos) {
      EXPECT_EQ(span.last, 3) << c.text;
      saw_page3 = true;
    }
  }
  EXPECT_TRUE(saw_page3);
}

TEST_F(PdfLoaderTest, TitleFallsBackToFirstLineThenFileStem) {
  auto first_line = LoadAll(Write("untitled.pdf", MakePdf(ThreePages())));
  ASSERT_TRUE(first_line.ok()) << first_line.status().ToString();
  EXPECT_EQ(first_line->front().title, "Chapter one: the Ostrel valley.");
  // A first page without text: the first line of the next page with text.
  std::vector<PdfPage> pages = ThreePages();
  pages.insert(pages.begin(), PdfPage{});
  auto skip_empty = LoadAll(Write("cover.pdf", MakePdf(pages)));
  ASSERT_TRUE(skip_empty.ok()) << skip_empty.status().ToString();
  EXPECT_EQ(skip_empty->front().title, "Chapter one: the Ostrel valley.");
  // A blank metadata title counts as absent.
  auto blank = LoadAll(Write("blank.pdf", MakePdf(ThreePages(), "   ")));
  ASSERT_TRUE(blank.ok());
  EXPECT_EQ(blank->front().title, "Chapter one: the Ostrel valley.");
  EXPECT_EQ(FirstLine("\n  \n  Only   line here  \nnext"), "Only line here");
  EXPECT_EQ(FirstLine(" \n\f\n"), "");
}

TEST_F(PdfLoaderTest, EmptyPagesKeepTheNumberingAndAreNoted) {
  std::vector<PdfPage> pages = ThreePages();
  pages.insert(pages.begin() + 1, PdfPage{{}, /*image=*/true});  // page 2: a scan
  pages.push_back(PdfPage{});                                    // page 5: blank
  const std::string path = Write("mixed.pdf", MakePdf(pages));
  LoadReport report;
  auto docs = LoadAll(path, {}, &report);
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  const std::vector<std::string> split = SplitPages(docs->front().text);
  ASSERT_EQ(split.size(), 5u);
  EXPECT_EQ(split[1], "");
  EXPECT_CONTAINS(split[2], "ground in 1881");  // still page 3
  EXPECT_EQ(split[4], "");
  ASSERT_EQ(report.messages.size(), 1u);
  EXPECT_CONTAINS(report.messages[0], "mixed.pdf: 2 of 5 pages have no text (pages 2, 5");
  EXPECT_CONTAINS(report.messages[0], "OCR is not done");
}

TEST_F(PdfLoaderTest, ScannedPdfWithoutTextLayerIsAnError) {
  const std::string path =
      Write("scan.pdf", MakePdf({PdfPage{{}, true}, PdfPage{{}, true}, PdfPage{}}));
  auto docs = LoadAll(path);
  ASSERT_FALSE(docs.ok());
  EXPECT_EQ(docs.status().code(), StatusCode::kInvalidArgument);
  EXPECT_CONTAINS(docs.status().message(), path + ": no text layer on any of its 3 pages");
  EXPECT_CONTAINS(docs.status().message(), "OCR is not done");
}

TEST_F(PdfLoaderTest, EncryptedPdfNeedsAPassword) {
  // tests/testdata/pdf/encrypted.pdf: two pages, qpdf --encrypt user owner 256.
  auto docs = LoadAll(kEncryptedPdf);
  ASSERT_FALSE(docs.ok());
  EXPECT_CONTAINS(docs.status().message(), kEncryptedPdf + ": the PDF is encrypted");
  EXPECT_CONTAINS(docs.status().message(), "password");
}

TEST_F(PdfLoaderTest, DamagedOrForeignBytesAreAnErrorNamingTheFile) {
  for (const std::string& bytes : {std::string("this is not a PDF at all, just text\n"),
                                   std::string("%PDF-1.4\n%%EOF\n"), std::string(4096, '\xff')}) {
    const std::string path = Write("bad.pdf", bytes);
    auto docs = LoadAll(path);
    ASSERT_FALSE(docs.ok()) << bytes.substr(0, 20);
    EXPECT_EQ(docs.status().code(), StatusCode::kInvalidArgument);
    EXPECT_CONTAINS(docs.status().message(), path + ": ");
    EXPECT_LT(docs.status().message().size(), 400u) << "quotes more than a short excerpt";
  }
  auto empty = LoadAll(Write("empty.pdf", ""));
  ASSERT_FALSE(empty.ok());
  EXPECT_CONTAINS(empty.status().message(), "empty.pdf: file is empty");
}

TEST_F(PdfLoaderTest, TruncatedPdfIsReadAsFarAsItGoesOrRefused) {
  // Every prefix either fails with a message naming the file or yields
  // valid text with one page break per page: never a crash or a hang.
  const std::string whole = MakePdf(ThreePages(), "Cut");
  for (size_t keep : {whole.size() / 4, whole.size() / 2, whole.size() - 40, whole.size() - 5}) {
    const std::string path = Write("cut.pdf", whole.substr(0, keep));
    auto docs = LoadAll(path);
    if (!docs.ok()) {
      EXPECT_CONTAINS(docs.status().message(), path + ": ");
      continue;
    }
    const std::string& text = docs->front().text;
    EXPECT_TRUE(IsValidUtf8(text));
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.back(), kPageBreak);
  }
}

TEST_F(PdfLoaderTest, LimitsGiveClearErrors) {
  const std::string path = Write("long.pdf", MakePdf(ThreePages()));
  LoadOptions pages;
  pages.pdf.max_pages = 2;
  auto many = LoadAll(path, pages);
  ASSERT_FALSE(many.ok());
  EXPECT_CONTAINS(many.status().message(), path + ": 3 pages: expected at most 2");
  LoadOptions text;
  text.pdf.max_text_bytes = 80;
  auto big_text = LoadAll(path, text);
  ASSERT_FALSE(big_text.ok());
  EXPECT_CONTAINS(big_text.status().message(), path + ": page 2: the text so far exceeds 80 bytes");
  LoadOptions bytes;
  bytes.max_pdf_file_bytes = 100;
  auto big_file = LoadAll(path, bytes);
  ASSERT_FALSE(big_file.ok());
  EXPECT_CONTAINS(big_file.status().message(), "bytes: expected a PDF of at most 100 bytes");
}

TEST_F(PdfLoaderTest, OneBadFileInAFolderDoesNotLoseTheOthers) {
  Write("docs/a_good.pdf", MakePdf(ThreePages(), "Good"));
  Write("docs/b_scan.pdf", MakePdf({PdfPage{{}, true}}));
  Write("docs/c_broken.pdf", "%PDF-1.7\ngarbage");
  WriteFile(dir_.File("docs/d_locked.pdf"), testing::ReadFile(kEncryptedPdf));
  Write("docs/e_page.html", "<title>Page</title><p>Hello from HTML.</p>");
  Write("docs/f_notes.txt", "Plain notes.\n");
  Write("docs/g_empty.htm", "<html><script>only()</script></html>");
  LoadReport report;
  auto docs = LoadAll(dir_.File("docs"), {}, &report);
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  std::vector<std::string> ids;
  for (const RawDocument& d : *docs) ids.push_back(d.external_id);
  EXPECT_EQ(ids, (std::vector<std::string>{"a_good.pdf", "e_page.html", "f_notes.txt"}));
  EXPECT_EQ(report.skipped_unreadable_files, 3);
  EXPECT_EQ(report.skipped_empty_files, 1);
  std::string all;
  for (const std::string& m : report.messages) all += m + "\n";
  EXPECT_CONTAINS(all, "skipped: " + dir_.File("docs/b_scan.pdf") + ": no text layer");
  EXPECT_CONTAINS(all, "skipped: " + dir_.File("docs/c_broken.pdf") + ": not a readable PDF");
  EXPECT_CONTAINS(all, "skipped: " + dir_.File("docs/d_locked.pdf") + ": the PDF is encrypted");
  EXPECT_CONTAINS(all, "skipped: " + dir_.File("docs/g_empty.htm") + ": no text outside markup");
}

// ---------------------------------------------------------------------------
// HTML.

TEST(HtmlTextTest, TitleAndBlocks) {
  const HtmlText h = ExtractHtmlText(
      "<!DOCTYPE html><html><head><title>  The   Ostrel\n Survey </title>"
      "<meta charset=\"utf-8\"><style>p { color: red }</style></head>"
      "<body><h1>Heading</h1><p>First   paragraph\nwith <b>bold</b> text.</p>"
      "<ul><li>one</li><li>two</li></ul><div>A</div><div>B</div>line<br>break"
      "<table><tr><td>x</td><td>y</td></tr><tr><td>z</td></tr></table></body></html>");
  EXPECT_EQ(h.title, "The Ostrel Survey");
  EXPECT_EQ(h.text,
            "Heading\n\nFirst paragraph with bold text.\n\none\ntwo\n\nA\nB\nline\nbreak\n\n"
            "x y\nz");
}

TEST(HtmlTextTest, ScriptsStylesCommentsAndTemplatesAreDropped) {
  const HtmlText h = ExtractHtmlText(
      "<p>keep1</p><script type=\"text/javascript\">var s = '</p>'; document.write('<b>no</b>');"
      "</script ><style>.x{}</style><noscript>enable js</noscript>"
      "<template><p>inert</p></template><!-- a <p>comment</p> -->"
      "<SCRIPT>upper()</SCRIPT><svg><text>drawn</text></svg><p>keep2</p><?php echo 1 ?>"
      "<![CDATA[raw]]><p>keep3</p>");
  EXPECT_EQ(h.text, "keep1\n\nkeep2\n\nkeep3");
}

TEST(HtmlTextTest, CharacterReferencesAreDecoded) {
  const HtmlText h = ExtractHtmlText(
      "<p>Fish &amp; chips &lt;3 &quot;q&quot; caf&eacute; &copy;2024 &mdash; "
      "&#233;&#xE9;&#X1F600; "
      "&hellip;&nbsp;x &#128; &#0; &#xD800; &#1114112; &unknown; &amp no-semicolon &#65</p>");
  EXPECT_EQ(h.text,
            "Fish & chips <3 \"q\" caf\xC3\xA9 \xC2\xA9"
            "2024 \xE2\x80\x94 \xC3\xA9\xC3\xA9\xF0\x9F\x98\x80 \xE2\x80\xA6 x \xE2\x82\xAC "
            "\xEF\xBF\xBD \xEF\xBF\xBD \xEF\xBF\xBD &unknown; &amp no-semicolon A");
  EXPECT_EQ(ExtractHtmlText("<title>Tom &amp; Jerry</title>x").title, "Tom & Jerry");
}

TEST(HtmlTextTest, TitleFallsBackToFirstH1) {
  EXPECT_EQ(ExtractHtmlText("<h2>no</h2><h1> Main  <i>Title</i></h1><h1>Second</h1>").title,
            "Main Title");
  EXPECT_EQ(ExtractHtmlText("<title> </title><h1></h1><h1>Real</h1>").title, "Real");
  EXPECT_EQ(ExtractHtmlText("<p>no headings</p>").title, "");
}

TEST(HtmlTextTest, PreformattedTextKeepsItsLines) {
  EXPECT_EQ(ExtractHtmlText("<p>a</p><pre>x  = 1\ny  = 2</pre><p>b</p>").text,
            "a\n\nx  = 1\ny  = 2\n\nb");
}

TEST(HtmlTextTest, MalformedMarkupDegradesGracefully) {
  EXPECT_EQ(ExtractHtmlText("1 < 2 and 3 > 2, a <= b").text, "1 < 2 and 3 > 2, a <= b");
  EXPECT_EQ(ExtractHtmlText("x </ > y").text, "x y");
  EXPECT_EQ(ExtractHtmlText("a<b,c d>e").text, "ae");  // "<b,c" opens an unknown tag
  const HtmlText unclosed_tag = ExtractHtmlText("<p>before</p><a href=\"x");
  EXPECT_EQ(unclosed_tag.text, "before");
  const HtmlText unclosed_quote = ExtractHtmlText("<p title=\"oops>kept?</p><p>after</p>");
  // A quote that never closes does not swallow the page: the tag ends at its next '>'.
  EXPECT_EQ(unclosed_quote.text, "kept?\n\nafter");
  EXPECT_EQ(ExtractHtmlText("<p>open <script>never closed").text, "open");
  EXPECT_EQ(ExtractHtmlText("<!-- never closed <p>x</p>").text, "");
  EXPECT_EQ(ExtractHtmlText("<div><div><b>deep</i></div>").text, "deep");
  EXPECT_EQ(ExtractHtmlText("").text, "");
  EXPECT_EQ(ExtractHtmlText("<").text, "<");
  EXPECT_EQ(ExtractHtmlText("&").text, "&");
  EXPECT_EQ(ExtractHtmlText("&#").text, "&#");
  EXPECT_EQ(ExtractHtmlText("<title>only title").title, "only title");
}

TEST(HtmlTextTest, PathologicalInputsStayLinear) {
  // Each would be quadratic with a naive rescan; they must finish at once
  // (the fuzz target's timeout guards the same).
  const std::string quotes(200000, '"');
  std::string tags;
  for (int i = 0; i < 50000; ++i) tags += "<a \"";
  std::string opens;
  for (int i = 0; i < 50000; ++i) opens += "<script>";
  for (const std::string& in :
       {quotes, tags, opens, std::string(200000, '<'), std::string(200000, '&')}) {
    const HtmlText h = ExtractHtmlText(in);
    EXPECT_LE(h.text.size(), 2 * in.size());
  }
}

TEST(HtmlTextTest, CharsetDeclarations) {
  EXPECT_EQ(DeclaredHtmlCharset("<meta charset=\"ISO-8859-1\">"), "iso-8859-1");
  EXPECT_EQ(DeclaredHtmlCharset(
                "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1252\">"),
            "windows-1252");
  EXPECT_EQ(DeclaredHtmlCharset("<p>none</p>"), "");
  EXPECT_TRUE(IsWindows1252Label("latin1"));
  EXPECT_FALSE(IsWindows1252Label("utf-8"));
}

class HtmlLoaderTest : public ::testing::Test {
 protected:
  TempDir dir_;
};

TEST_F(HtmlLoaderTest, LoadsTextAndTitle) {
  const std::string path = dir_.File("page.html");
  WriteFile(path,
            "\xEF\xBB\xBF<html><head><title>River &amp; Valley</title><script>x()</script></head>"
            "<body><h1>Ignored as title</h1><p>The Ostrel is 212 km long.</p></body></html>");
  ASSERT_EQ(DetectSourceKind(path).value(), SourceKind::kHtml);
  auto docs = LoadAll(path);
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  EXPECT_EQ(docs->front().external_id, "page.html");
  EXPECT_EQ(docs->front().title, "River & Valley");
  EXPECT_EQ(docs->front().text, "Ignored as title\n\nThe Ostrel is 212 km long.");
}

TEST_F(HtmlLoaderTest, TitleFallsBackToH1ThenFileStem) {
  WriteFile(dir_.File("a.htm"), "<h1>From H1</h1><p>text</p>");
  WriteFile(dir_.File("b.HTML"), "<p>no title here</p>");
  auto a = LoadAll(dir_.File("a.htm"));
  auto b = LoadAll(dir_.File("b.HTML"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->front().title, "From H1");
  EXPECT_EQ(b->front().title, "b");
}

TEST_F(HtmlLoaderTest, DeclaredLatin1IsConvertedOtherInvalidUtf8IsAnError) {
  WriteFile(dir_.File("latin.html"), "<meta charset=iso-8859-1><p>Caf\xE9 cr\xE8me</p>");
  auto latin = LoadAll(dir_.File("latin.html"));
  ASSERT_TRUE(latin.ok()) << latin.status().ToString();
  EXPECT_EQ(latin->front().text, "Caf\xC3\xA9 cr\xC3\xA8me");
  WriteFile(dir_.File("bad.html"), "<p>ok</p><p>bad \xFF byte</p>");
  auto bad = LoadAll(dir_.File("bad.html"));
  ASSERT_FALSE(bad.ok());
  EXPECT_CONTAINS(bad.status().message(),
                  dir_.File("bad.html") + ": invalid UTF-8 at byte offset 16");
  LoadOptions replace;
  replace.invalid_utf8 = LoadOptions::InvalidUtf8::kReplace;
  auto replaced = LoadAll(dir_.File("bad.html"), replace);
  ASSERT_TRUE(replaced.ok());
  EXPECT_CONTAINS(replaced->front().text, "bad \xEF\xBF\xBD byte");
}

TEST_F(HtmlLoaderTest, HugeAndEmptyFilesGiveClearErrors) {
  WriteFile(dir_.File("big.html"), "<p>" + std::string(5000, 'x') + "</p>");
  LoadOptions small;
  small.max_html_file_bytes = 1000;
  auto big = LoadAll(dir_.File("big.html"), small);
  ASSERT_FALSE(big.ok());
  EXPECT_CONTAINS(big.status().message(),
                  dir_.File("big.html") +
                      ": file is 5007 bytes: expected an HTML file of at most "
                      "1000 bytes");
  WriteFile(dir_.File("blank.html"), "<html><!-- nothing --></html>");
  auto blank = LoadAll(dir_.File("blank.html"));
  ASSERT_FALSE(blank.ok());
  EXPECT_CONTAINS(blank.status().message(), "blank.html: no text outside markup");
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
