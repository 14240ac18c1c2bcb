#include "ingest/pdf_text.h"

#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-page.h>

#include <climits>
#include <memory>
#include <mutex>

#include "ingest/document.h"
#include "ingest/utf8.h"

namespace flowrag {
namespace {

constexpr size_t kMaxQuote = 120;
constexpr size_t kMaxTitle = 200;

// poppler reports problems through one process-wide hook. It is installed
// once; the thread that is reading a document collects the first message.
thread_local std::string* poppler_messages = nullptr;

void CollectPopplerMessage(const std::string& message, void*) {
  if (poppler_messages != nullptr && poppler_messages->empty()) {
    *poppler_messages = message.substr(0, 4 * kMaxQuote);
  }
}

void InstallPopplerHook() {
  static std::once_flag once;
  std::call_once(once, [] { poppler::set_debug_error_function(&CollectPopplerMessage, nullptr); });
}

class CollectMessages {
 public:
  explicit CollectMessages(std::string* into) { poppler_messages = into; }
  ~CollectMessages() { poppler_messages = nullptr; }
};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v'; }

std::string_view CutUtf8(std::string_view s, size_t max) {
  if (s.size() <= max) return s;
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut);
}

// A short, single-line, valid UTF-8 excerpt of a poppler message.
std::string Quote(std::string_view message) {
  std::string one_line;
  for (char c : message) one_line += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  std::string out = SanitizeUtf8(CutUtf8(one_line, kMaxQuote));
  return out.size() < one_line.size() ? out + "..." : out;
}

// Valid UTF-8 without form feeds, NULs or other C0 controls but '\n' and
// '\t', with trailing whitespace removed.
std::string CleanPageText(std::string_view raw) {
  std::string text = SanitizeUtf8(raw);
  for (char& c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (c == '\r' || c == kPageBreak) {
      c = '\n';
    } else if (b < 0x20 && c != '\n' && c != '\t') {
      c = ' ';
    }
  }
  while (!text.empty() && IsSpace(text.back())) text.pop_back();
  return text;
}

std::string ToUtf8(const poppler::ustring& s) {
  const poppler::byte_array bytes = s.to_utf8();
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace

std::string FirstLine(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find_first_of("\n\f", pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string line;
    bool space = false;
    for (char c : text.substr(pos, eol - pos)) {
      if (IsSpace(c)) {
        space = true;
        continue;
      }
      if (space && !line.empty()) line.push_back(' ');
      space = false;
      line.push_back(c);
      if (line.size() > kMaxTitle) break;
    }
    if (!line.empty()) return std::string(CutUtf8(line, kMaxTitle));
    pos = eol + 1;
  }
  return "";
}

Result<PdfText> ExtractPdfText(std::string_view bytes, const std::string& display,
                               const PdfLimits& limits) {
  InstallPopplerHook();
  std::string first_message;
  CollectMessages collect(&first_message);
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return Status::InvalidArgument(display + ": " + std::to_string(bytes.size()) +
                                   " bytes: poppler reads PDFs of at most 2 GiB");
  }
  std::unique_ptr<poppler::document> doc(
      poppler::document::load_from_raw_data(bytes.data(), static_cast<int>(bytes.size())));
  if (doc == nullptr) {
    const std::string why = first_message.empty() ? "" : " (poppler: " + Quote(first_message) + ")";
    return Status::InvalidArgument(display + ": not a readable PDF" + why +
                                   ": the file is damaged, truncated or not a PDF");
  }
  if (doc->is_locked()) {
    return Status::InvalidArgument(
        display +
        ": the PDF is encrypted and needs a password: flowrag does not decrypt PDFs (remove the "
        "password first, e.g. with qpdf --decrypt)");
  }
  PdfText out;
  out.pages = doc->pages();
  if (out.pages <= 0) {
    return Status::InvalidArgument(display + ": the PDF has no pages");
  }
  if (out.pages > limits.max_pages) {
    return Status::InvalidArgument(display + ": " + std::to_string(out.pages) +
                                   " pages: expected at most " + std::to_string(limits.max_pages) +
                                   " (PdfLimits::max_pages)");
  }
  out.title = FirstLine(CleanPageText(ToUtf8(doc->info_key("Title"))));
  for (int i = 0; i < out.pages; ++i) {
    std::unique_ptr<poppler::page> page(doc->create_page(i));
    if (page == nullptr) {
      out.unreadable_pages.push_back(i + 1);
      out.empty_pages.push_back(i + 1);
      out.text.push_back(kPageBreak);
      continue;
    }
    const std::string text = CleanPageText(
        ToUtf8(page->text(poppler::rectf(), poppler::page::non_raw_non_physical_layout)));
    if (IsBlank(text)) {
      out.empty_pages.push_back(i + 1);
    } else {
      out.text += text;
      out.text.push_back('\n');
    }
    out.text.push_back(kPageBreak);
    if (out.text.size() > limits.max_text_bytes) {
      return Status::InvalidArgument(
          display + ": page " + std::to_string(i + 1) + ": the text so far exceeds " +
          std::to_string(limits.max_text_bytes) + " bytes (PdfLimits::max_text_bytes)");
    }
  }
  if (static_cast<int>(out.empty_pages.size()) == out.pages) {
    std::string what =
        out.pages == 1 ? "its page" : "any of its " + std::to_string(out.pages) + " pages";
    return Status::InvalidArgument(display + ": no text layer on " + what +
                                   " (a scanned document?): OCR is not done");
  }
  return out;
}

}  // namespace flowrag
