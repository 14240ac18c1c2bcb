// Where an index run's documents come from (ingest_phase.h's
// DocumentProducer): files and folders through the loaders, or documents
// given directly (Engine::IndexDocuments, POST /v1/documents, the MCP
// index_text tool, Python), checked whole before anything is stored.
#ifndef FLOWRAG_INDEXING_DOCUMENT_SOURCES_H_
#define FLOWRAG_INDEXING_DOCUMENT_SOURCES_H_

#include <string>
#include <vector>

#include "flowrag/types.h"
#include "indexing/ingest_phase.h"

namespace flowrag {

// The documents of `sources` (files, folders, benchmark folders; every
// loader of ingest/loaders.h) in order. The loaders' skips and rejections
// are appended to *messages (not owned; must outlive the producer).
DocumentProducer LoadedDocuments(const std::vector<std::string>& sources, const LoadOptions& load,
                                 std::vector<std::string>* messages);

// InvalidArgument naming `documents[i].<field>` for an empty id or text,
// text or title that is not UTF-8, or an id given twice (quoting at most 80
// bytes of it). O(total bytes).
Status ValidateDocumentInputs(const std::vector<DocumentInput>& documents);

// `documents` as loaded documents of source "api", line i + 1. The vector
// must outlive the producer.
DocumentProducer GivenDocuments(const std::vector<DocumentInput>& documents);

}  // namespace flowrag

#endif  // FLOWRAG_INDEXING_DOCUMENT_SOURCES_H_
