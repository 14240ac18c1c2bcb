// Pages end to end: a PDF indexed by the engine keeps its page breaks in the
// store, its passages report their pages (ScoredPassage::page_first/last,
// the "page"/"pages" JSON fields), and Ask's citations name the page of the
// sentence they quote ("report.pdf p. 2"). HTML documents index alongside.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/result_json.h"
#include "flowrag/engine.h"
#include "pdf_fixtures.h"
#include "storage/store.h"
#include "test_util.h"

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

using testing::MakePdf;
using testing::PdfPage;
using testing::TempDir;
using testing::WriteFile;

[[maybe_unused]] ::testing::Environment* const kOffline =
    ::testing::AddGlobalTestEnvironment(new testing::OfflineEnvironment);

// Four pages, one subject each; page 3 is a scan without text.
std::string ReportPdf() {
  return MakePdf(
      {PdfPage{{"The Ostrel valley survey.", "The River Ostrel is 212 kilometres long and",
                "rises in the hills above Wrenfield village."}},
       PdfPage{{"Instruments.", "The Brannock lens was ground in 1881 by the optician",
                "Corin Aske in his workshop at Port Calder."}},
       PdfPage{{}, /*image=*/true},
       PdfPage{{"Clubs.", "Hollin Bay Athletic was founded in 1902 beside the",
                "harbour wall of the old fishing town."}}},
      "Valley Report");
}

class PdfPagesEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(dir_.File("docs/report.pdf"), ReportPdf());
    WriteFile(dir_.File("docs/club.html"),
              "<html><head><title>Port Calder Rowing Club</title><script>track()</script></head>"
              "<body><h1>History</h1><p>The Port Calder Rowing Club was founded in 1911.</p>"
              "</body></html>");
    auto engine = Engine::Open(dir_.File("store.db"));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(*engine);
    IndexOptions options;
    options.extractor = "none";
    options.chunking.window_words = 12;  // about a page each, so pages differ
    options.chunking.overlap_words = 2;
    options.progress = nullptr;
    auto report = engine_->Index({dir_.File("docs")}, options);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_EQ(report->documents_added, 2u);
  }

  // The top passage of a BM25 query.
  ScoredPassage Top(const std::string& question) {
    QueryOptions q;
    q.method = "bm25";
    q.top_k = 3;
    auto r = engine_->Query(question, q);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok() || r->passages.empty()) return {};
    return r->passages.front();
  }

  TempDir dir_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(PdfPagesEngineTest, PassagesReportTheirPages) {
  const ScoredPassage lens = Top("Brannock lens ground optician");
  EXPECT_EQ(lens.document_id, "report.pdf");
  EXPECT_EQ(lens.title, "Valley Report");
  EXPECT_EQ(lens.page_first, 2) << lens.text;
  EXPECT_EQ(lens.page_last, 2) << lens.text;
  // Page 3 has no text, so the club is on page 4, not 3.
  const ScoredPassage club = Top("Hollin Bay Athletic harbour wall fishing");
  EXPECT_EQ(club.document_id, "report.pdf");
  EXPECT_EQ(club.page_last, 4) << club.text;
  // HTML has no pages.
  const ScoredPassage html = Top("Port Calder Rowing Club 1911");
  EXPECT_EQ(html.document_id, "club.html");
  EXPECT_EQ(html.title, "Port Calder Rowing Club");
  EXPECT_EQ(html.page_first, 0);
  EXPECT_EQ(html.text.find("track()"), std::string::npos);
}

TEST_F(PdfPagesEngineTest, JsonCarriesPageFields) {
  QueryOptions q;
  q.method = "bm25";
  q.top_k = 10;
  auto r = engine_->Query("Brannock lens Port Calder Rowing Club", q);
  ASSERT_TRUE(r.ok());
  const nlohmann::json j = RetrievalResultJson(*r);
  bool saw_pdf = false, saw_html = false;
  for (const auto& p : j["passages"]) {
    if (p["document_id"] == "report.pdf") {
      saw_pdf = true;
      ASSERT_TRUE(p.contains("page")) << p.dump();
      EXPECT_GE(p["page"].get<int>(), 1);
      EXPECT_EQ(p["pages"].size(), 2u);
      EXPECT_LE(p["pages"][0].get<int>(), p["pages"][1].get<int>());
    } else {
      saw_html = true;
      EXPECT_FALSE(p.contains("page")) << p.dump();
    }
  }
  EXPECT_TRUE(saw_pdf);
  EXPECT_TRUE(saw_html);
}

TEST_F(PdfPagesEngineTest, CitationsNameThePage) {
  AnswerOptions options;
  options.query.method = "bm25";
  options.pipeline = "single";
  auto answer = engine_->Ask("In which year was the Brannock lens ground?", options);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_NE(answer->text.find("1881"), std::string::npos) << answer->text;
  bool cited = false;
  for (const Citation& c : answer->citations) {
    if (c.quote.find("1881") == std::string::npos) continue;
    cited = true;
    EXPECT_EQ(c.document_id, "report.pdf");
    EXPECT_EQ(c.page_first, 2) << c.quote;
    EXPECT_EQ(c.page_last, 2) << c.quote;  // the quote stops at the page break
    EXPECT_EQ(c.document_id + " " + PagesLabel(c.page_first, c.page_last), "report.pdf p. 2");
    const nlohmann::json j = CitationJson(c);
    EXPECT_EQ(j["page"], 2);
  }
  EXPECT_TRUE(cited) << AnswerJson(*answer).dump(2);
}

TEST_F(PdfPagesEngineTest, ReindexingTheSamePdfChangesNothing) {
  IndexOptions options;
  options.extractor = "none";
  options.chunking.window_words = 12;
  options.chunking.overlap_words = 2;
  options.progress = nullptr;
  auto again = engine_->Index({dir_.File("docs")}, options);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->documents_unchanged, 2u);
  EXPECT_EQ(again->documents_added, 0u);
}

TEST_F(PdfPagesEngineTest, PagesSurviveReopeningTheStore) {
  // A second engine reads the store (and the snapshot parts the first one
  // persisted): the pages come from the stored text.
  engine_.reset();
  auto reopened = Engine::Open(dir_.File("store.db"));
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  engine_ = std::move(*reopened);
  const ScoredPassage lens = Top("Brannock lens ground optician");
  EXPECT_EQ(lens.page_first, 2) << lens.text;
}

TEST(PdfPagesOldStoreTest, AStoreOfAnOlderFormatOpensAndIndexesPdfs) {
  // Pages need no format change: a format-1 store is migrated as before,
  // its earlier documents have no pages, and a PDF indexed into it has.
  TempDir dir;
  const std::string db = dir.File("v1.db");
  {
    StoreOptions old;
    old.create_format_version = 1;
    auto s = Store::Open(db, old);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_EQ((*s)->format_version(), 1);
  }
  WriteFile(dir.File("old/notes.txt"), "The lighthouse keeper logged the storm of 1899.\n");
  WriteFile(dir.File("new/report.pdf"), ReportPdf());
  auto engine = Engine::Open(db);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  IndexOptions options;
  options.extractor = "none";
  options.chunking.window_words = 12;
  options.chunking.overlap_words = 2;
  ASSERT_TRUE((*engine)->Index({dir.File("old")}, options).ok());
  ASSERT_TRUE((*engine)->Index({dir.File("new")}, options).ok());
  QueryOptions q;
  q.method = "bm25";
  auto storm = (*engine)->Query("lighthouse keeper storm", q);
  ASSERT_TRUE(storm.ok() && !storm->passages.empty());
  EXPECT_EQ(storm->passages.front().document_id, "notes.txt");
  EXPECT_EQ(storm->passages.front().page_first, 0);
  auto lens = (*engine)->Query("Brannock lens ground optician", q);
  ASSERT_TRUE(lens.ok() && !lens->passages.empty());
  EXPECT_EQ(lens->passages.front().page_first, 2);
}

TEST(PagesLabelTest, Forms) {
  EXPECT_EQ(PagesLabel(0, 0), "");
  EXPECT_EQ(PagesLabel(12, 12), "p. 12");
  EXPECT_EQ(PagesLabel(12, 13), "pp. 12-13");
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
