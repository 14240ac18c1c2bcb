// Fuzz target: the persisted snapshot parts (src/graph/graph_io.h), as the
// snapshot reads them from the store: the graph rows (ParseGraphRows, then
// KnowledgeGraph::Build on what it accepts, as every open does), the BM25
// postings (ParseBm25Part), the graph vectors with their sparse indexes
// (ParseGraphVectorsPart) and the passage parts: the passage vectors
// (ParsePassageVectorsPart) and the passage HNSW index (ParsePassageHnswPart
// under the default HNSW options, then a search); each rejects the other's
// magic, so both read every such input.
//
// Input: byte 0: bits 0-1 pick the part, bits 2-7 the store's passage count
// (0..63; the graph rows take theirs from their own header). For the graph
// vectors, bytes 1-5 are the shape the rows would give: byte 1 the embedder
// dimension (bits 0-1: 1024, 16, 4, 1), bytes 2-5 the entity, description,
// fact and relation counts. The rest is the part's bytes (without the
// store's header and checksum).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "graph/graph_io.h"
#include "graph/knowledge_graph.h"
#include "vector/hnsw_index.h"

namespace {

void GraphRows(std::string_view bytes) {
  uint64_t passages = 0;
  if (bytes.size() >= 16) std::memcpy(&passages, bytes.data() + 8, sizeof(passages));
  if (passages > (1u << 16)) passages = 0;  // would fail the check anyway
  auto rows = flowrag::ParseGraphRows(bytes, passages);
  if (!rows.ok()) {
    FUZZ_CHECK_ERROR(rows.status());
    return;
  }
  const std::string again = flowrag::SerializeGraphRows(*rows);
  FUZZ_CHECK(flowrag::ParseGraphRows(again, passages).ok(), "serialised rows do not parse");
  auto graph = flowrag::KnowledgeGraph::Build(std::move(rows).value());
  if (!graph.ok()) {
    FUZZ_CHECK_ERROR(graph.status());
    return;
  }
  (void)(*graph)->num_nodes();
}

void Bm25(std::string_view bytes, size_t passages) {
  auto index = flowrag::ParseBm25Part(bytes, passages);
  if (!index.ok()) {
    FUZZ_CHECK_ERROR(index.status());
    return;
  }
  (void)index->Search("the beatles abbey road 1969", 5, flowrag::Bm25Params{});
  (void)index->ScoreMatching("the beatles abbey road 1969", flowrag::Bm25Params{});
}

void GraphVectors(std::string_view bytes) {
  if (bytes.size() < 5) return;
  static const size_t kDims[] = {1024, 16, 4, 1};
  const size_t dim = kDims[static_cast<uint8_t>(bytes[0]) & 3];
  flowrag::KnowledgeGraph::Input rows;
  rows.entity_names.resize(static_cast<uint8_t>(bytes[1]));
  rows.description_texts.resize(static_cast<uint8_t>(bytes[2]));
  rows.fact_texts.resize(static_cast<uint8_t>(bytes[3]));
  rows.relation_texts.resize(static_cast<uint8_t>(bytes[4]));
  auto vectors = flowrag::ParseGraphVectorsPart(bytes.substr(5), dim, rows);
  if (!vectors.ok()) {
    FUZZ_CHECK_ERROR(vectors.status());
    return;
  }
  std::vector<float> query(dim, 0.0f);
  query[0] = 1.0f;
  flowrag::VectorSearchParams params;
  params.k = 5;
  for (const auto* index : {vectors->entity_index.get(), vectors->description_index.get(),
                            vectors->fact_index.get()}) {
    if (index != nullptr) (void)index->Search(query.data(), params, nullptr);
  }
}

void PassageVectors(std::string_view bytes, size_t passages) {
  size_t missing = 0;
  auto m = flowrag::ParsePassageVectorsPart(bytes, passages, &missing);
  if (!m.ok()) {
    FUZZ_CHECK_ERROR(m.status());
    return;
  }
  FUZZ_CHECK(m->data.size() == m->rows * m->cols && missing <= m->rows, "passage vectors shape");
}

void PassageHnsw(std::string_view bytes, size_t passages) {
  size_t missing = 0;
  auto index = flowrag::ParsePassageHnswPart(bytes, flowrag::VectorIndexOptions{}, passages,
                                             /*dim=*/0, &missing);
  if (!index.ok()) {
    FUZZ_CHECK_ERROR(index.status());
    return;
  }
  FUZZ_CHECK((*index)->Size() == passages && missing <= passages, "passage hnsw shape");
  std::vector<float> query((*index)->Dimension(), 0.0f);
  query[0] = 1.0f;
  flowrag::VectorSearchParams params;
  params.k = 5;
  (void)(*index)->Search(query.data(), params, nullptr);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t passages = data[0] >> 2;
  switch (data[0] & 3) {
    case 0: GraphRows(bytes); break;
    case 1: Bm25(bytes, passages); break;
    case 2: GraphVectors(bytes); break;
    case 3:
      PassageVectors(bytes, passages);
      PassageHnsw(bytes, passages);
      break;
  }
  return 0;
}
