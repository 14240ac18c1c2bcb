// Fuzz target: the Model Context Protocol server's message handling
// (src/mcp/): the stdio line splitting (LineReader, ServeLines with a small
// line limit), JSON-RPC parsing and classification (ParseJson, Classify),
// batches, every method's params and every tool's arguments (ArgReader),
// resource URIs (DocumentIdOfUri) and cursors, against an in-memory stub
// Engine with canned results (so only the MCP code is fuzzed, fast).
//
// Input: a byte stream as `flowrag mcp` reads it on stdin (newline-delimited
// messages). Every reply must be one line of JSON that is a JSON-RPC
// response (or a batch of them).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "flowrag/engine.h"
#include "fuzz_util.h"
#include "mcp/jsonrpc.h"
#include "mcp/resources.h"
#include "mcp/session.h"
#include "mcp/stdio.h"

namespace {

using flowrag::Result;
using flowrag::Status;

// Canned answers; documents "a" and "b/c" exist.
class StubEngine final : public flowrag::Engine {
 public:
  Result<flowrag::IndexReport> Index(const std::vector<std::string>&,
                                     const flowrag::IndexOptions&) override {
    return Status::Internal("stub");
  }
  Result<flowrag::IndexReport> IndexDocuments(const std::vector<flowrag::DocumentInput>& docs,
                                              const flowrag::IndexOptions&) override {
    flowrag::IndexReport r;
    r.documents_seen = r.documents_added = docs.size();
    return r;
  }
  Result<flowrag::IngestReport> Ingest(const std::string&, const flowrag::SchemaContract&,
                                       const flowrag::IngestOptions&) override {
    return Status::Internal("stub");
  }
  Result<flowrag::ImportReport> ImportOpenIe(const std::string&,
                                             const flowrag::ImportOpenIeOptions&) override {
    return Status::Internal("stub");
  }
  Status DeleteDocument(std::string_view id) override {
    return Known(id) ? Status::Ok() : Status::NotFound("no such document");
  }
  Result<flowrag::RetrievalResult> Query(std::string_view question,
                                         const flowrag::QueryOptions& options) const override {
    if (!options.params.empty()) return Status::InvalidArgument("unknown option");
    flowrag::RetrievalResult r;
    r.method = options.method;
    flowrag::ScoredPassage p;
    p.passage_id = 1;
    p.document_id = "a";
    p.title = "Title A";
    p.end = 5;
    p.text = std::string(question.substr(0, 20));
    p.score = 0.5;
    r.passages.push_back(std::move(p));
    return r;
  }
  Result<flowrag::Answer> Ask(std::string_view question,
                              const flowrag::AnswerOptions& options) const override {
    flowrag::Answer a;
    a.question = std::string(question);
    a.text = "answer";
    a.pipeline = options.pipeline;
    a.citations.push_back({1, 1, "b/c", "Title B", "quote", 0, 5});
    return a;
  }
  flowrag::Result<std::shared_ptr<const flowrag::GraphView>> Graph() const override {
    return flowrag::Status::FailedPrecondition("stub engine: no graph");
  }
  Result<flowrag::StoreStats> Stats() const override {
    flowrag::StoreStats s;
    s.documents = 2;
    return s;
  }
  Result<flowrag::DocumentPage> ListDocuments(std::string_view cursor,
                                              size_t limit) const override {
    if (!cursor.empty() && cursor != "1") return Status::InvalidArgument("cursor: not one");
    flowrag::DocumentPage page;
    if (cursor.empty()) {
      page.documents.push_back({"a", "Title A", "", 5});
      if (limit < 2) {
        page.next_cursor = "1";
        return page;
      }
    }
    page.documents.push_back({"b/c", "", "", 3});
    return page;
  }
  Result<flowrag::StoredDocument> GetDocument(std::string_view id) const override {
    if (!Known(id)) return Status::NotFound("no such document");
    return flowrag::StoredDocument{std::string(id), "T", "text", 4};
  }
  Result<flowrag::FloatMatrix> Embed(const std::vector<std::string>&) const override {
    return Status::Internal("stub");
  }
  Result<bool> Refresh() override { return false; }
  Status Compact() override { return Status::Ok(); }

 private:
  static bool Known(std::string_view id) { return id == "a" || id == "b/c"; }
};

void CheckReplyLine(std::string_view line) {
  FUZZ_CHECK(!line.empty() && line.back() == '\n', "a reply is one line");
  line.remove_suffix(1);
  FUZZ_CHECK(line.find('\n') == std::string_view::npos, "a reply holds no raw newline");
  nlohmann::json reply;
  FUZZ_CHECK(!flowrag::mcp::ParseJson(line, &reply),
             "a reply is JSON: " + std::string(line.substr(0, 200)));
  auto check = [](const nlohmann::json& r) {
    FUZZ_CHECK(r.is_object() && r.value("jsonrpc", "") == "2.0", "a JSON-RPC response");
    FUZZ_CHECK(r.contains("result") != r.contains("error"), "result or error");
    if (r.contains("error")) {
      const std::string message = r["error"].value("message", "");
      FUZZ_CHECK(!message.empty() && message.size() <= flowrag::fuzz::kMaxErrorBytes,
                 "error message empty or too long: " + message.substr(0, 300));
    }
  };
  if (reply.is_array()) {
    FUZZ_CHECK(!reply.empty(), "no empty batch reply");
    for (const nlohmann::json& r : reply) check(r);
  } else {
    check(reply);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  static StubEngine engine;
  flowrag::mcp::McpSessionOptions options;
  options.page_size = 1 + size % 2;
  options.allow_writes = size % 3 != 0;
  flowrag::mcp::McpSession session(engine, options);
  flowrag::mcp::StdioOptions stdio;
  stdio.max_line_bytes = 4096;
  stdio.log = [](const std::string& line) {
    FUZZ_CHECK(line.size() <= flowrag::fuzz::kMaxErrorBytes, "log line too long");
  };
  size_t at = 0;
  auto read = [&](char* buffer, size_t n) -> long {
    const size_t k =
        std::min({n, input.size() - at, size_t{977}});  // odd chunks: lines split across reads
    std::copy_n(input.data() + at, k, buffer);
    at += k;
    return static_cast<long>(k);
  };
  const Status st = flowrag::mcp::ServeLines(
      session, read,
      [](std::string_view line) {
        CheckReplyLine(line);
        return true;
      },
      stdio);
  FUZZ_CHECK(st.ok(), st.ToString());
  // Each line read as a resource URI too.
  size_t start = 0;
  while (start < input.size()) {
    const size_t nl = std::min(input.find('\n', start), input.size());
    const std::string_view line = input.substr(start, nl - start);
    if (auto id = flowrag::mcp::DocumentIdOfUri(line)) {
      FUZZ_CHECK(flowrag::mcp::DocumentIdOfUri(flowrag::mcp::DocumentUri(*id)) == id,
                 "URI round trip");
    }
    start = nl + 1;
  }
  return 0;
}
