#include "indexing/document_sources.h"

#include <string_view>
#include <unordered_map>

#include "common/encoding.h"
#include "common/text.h"

namespace flowrag {

DocumentProducer LoadedDocuments(const std::vector<std::string>& sources, const LoadOptions& load,
                                 std::vector<std::string>* messages) {
  return [&sources, load, messages](const DocumentSink& sink) -> Status {
    for (const std::string& source : sources) {
      LoadReport report;
      FLOWRAG_RETURN_IF_ERROR(LoadSource(source, load, sink, &report));
      messages->insert(messages->end(), report.messages.begin(), report.messages.end());
    }
    return Status::Ok();
  };
}

Status ValidateDocumentInputs(const std::vector<DocumentInput>& documents) {
  std::unordered_map<std::string_view, size_t> ids;
  for (size_t i = 0; i < documents.size(); ++i) {
    const DocumentInput& d = documents[i];
    const std::string where = "documents[" + std::to_string(i) + "]";
    if (d.id.empty()) return Status::InvalidArgument(where + ".id: expected a non-empty string");
    if (d.text.find_first_not_of(" \t\r\n") == std::string::npos) {
      return Status::InvalidArgument(where + ".text: expected non-empty text");
    }
    size_t bad = 0;
    if (!IsValidUtf8(d.text, &bad)) {
      return Status::InvalidArgument(where + ".text: invalid UTF-8 at byte " + std::to_string(bad));
    }
    if (!IsValidUtf8(d.title, &bad)) {
      return Status::InvalidArgument(where + ".title: invalid UTF-8 at byte " +
                                     std::to_string(bad));
    }
    auto [it, inserted] = ids.emplace(d.id, i);
    if (!inserted) {
      return Status::InvalidArgument(where + ".id: \"" + EscapeForMessage(d.id, 80) +
                                     "\" repeats documents[" + std::to_string(it->second) + "]");
    }
  }
  return Status::Ok();
}

DocumentProducer GivenDocuments(const std::vector<DocumentInput>& documents) {
  return [&documents](const DocumentSink& sink) -> Status {
    for (size_t i = 0; i < documents.size(); ++i) {
      RawDocument doc;
      doc.external_id = documents[i].id;
      doc.title = documents[i].title;
      doc.text = documents[i].text;
      doc.source = "api";
      doc.line = static_cast<int64_t>(i) + 1;
      FLOWRAG_RETURN_IF_ERROR(sink(std::move(doc)));
    }
    return Status::Ok();
  };
}

}  // namespace flowrag
