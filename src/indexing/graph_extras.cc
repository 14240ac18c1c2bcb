#include "indexing/graph_extras.h"

#include <algorithm>
#include <functional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "common/hash.h"
#include "common/progress.h"
#include "graph/graph_loader.h"
#include "graph/graph_vectors.h"
#include "graph/graph_texts.h"
#include "common/text.h"
#include "vector/sparse_index.h"

namespace flowrag {

Status EmbedGraphTexts(GraphSource& graph, EmbeddingCache& cache, Embedder& embedder,
                       size_t batch_size, const ProgressCallback& progress,
                       size_t* embedded) {
  *embedded = 0;
  if (embedder.IsLocal()) return Status::Ok();  // embedded when snapshots are built
  const std::string model = embedder.ModelId();
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<uint64_t> have_list, cache.EmbeddingHashes(model));
  std::unordered_set<uint64_t> have(have_list.begin(), have_list.end());
  std::vector<std::string> texts;
  std::vector<uint64_t> hashes;
  auto want = [&](std::string text) {
    const uint64_t h = Hash64(text);
    if (text.empty() || !have.insert(h).second) return;
    texts.push_back(std::move(text));
    hashes.push_back(h);
  };
  std::unordered_map<int64_t, std::string> names;
  FLOWRAG_RETURN_IF_ERROR(graph.ForEachEntity([&](GraphSource::EntityRow&& e) -> Status {
    want(EntityText(e.name));
    names.emplace(e.id, std::move(e.name));
    return Status::Ok();
  }));
  FLOWRAG_RETURN_IF_ERROR(graph.ForEachDescription([&](GraphSource::DescriptionRow&& d) -> Status {
    want(std::move(d.text));
    return Status::Ok();
  }));
  std::unordered_map<int64_t, std::string> relations;
  FLOWRAG_RETURN_IF_ERROR(graph.ForEachRelation([&](int64_t id, std::string&& text) -> Status {
    want(text);
    relations.emplace(id, std::move(text));
    return Status::Ok();
  }));
  FLOWRAG_RETURN_IF_ERROR(graph.ForEachFact([&](const GraphSource::FactRow& f) -> Status {
    want(FactText(names[f.subject_id], relations[f.relation_id], names[f.object_id]));
    return Status::Ok();
  }));
  Progress meter("embed graph", "texts", texts.size(), progress);
  for (size_t start = 0; start < texts.size(); start += batch_size) {
    const size_t n = std::min(batch_size, texts.size() - start);
    std::span<const std::string> part(texts.data() + start, n);
    FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix vectors, embedder.Embed(part));
    FLOWRAG_RETURN_IF_ERROR(cache.PutEmbeddings(
        model, std::span<const uint64_t>(hashes.data() + start, n), vectors));
    *embedded += n;
    meter.Advance(n);
  }
  meter.Finish();
  return Status::Ok();
}

namespace {

// Word-prefix keys of an entity name (see LexicalSynonyms).
std::vector<std::string> BlockingKeys(const std::string& text) {
  std::vector<std::string> out;
  for (std::string w : Tokenize(text)) {
    if (w.size() > 4) w.resize(4);
    out.push_back(std::move(w));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Synonym candidates for lexical (built-in, hashed) vectors. A cosine of 0.8
// needs most of the words' weight in common, whole words or their character
// n-grams (spelling variants: "organisation"/"organization"). Candidates are
// the entities sharing a word prefix of up to 4 characters (prefixes naming
// more than max_word_entities entities are no key); then exact cosines.
// O(changed · candidates · nnz) instead of all pairs. The blocking also
// keeps out hash-bucket collisions: a one-word name's unigram carries 80% of
// its squared norm, so two unrelated one-word names whose unigrams share a
// bucket and sign score 0.8 ("Kentucky" ~ "2018" in musique-train; exact
// search over all pairs finds 3,389 edges there, 1,365 of them such
// collisions, against 2,024 with blocking).
// Names are embedded into sparse rows only when a changed entity or a
// candidate of one needs them: an insert embeds a handful, a first index
// run every name once (never a dense matrix of all).
class LexicalSynonyms {
 public:
  // `keys`: each row's entity by content (name and type), which breaks
  // ties between equal scores, so that the top_k kept do not depend on the
  // order in which (parallel) writers created the entities.
  LexicalSynonyms(Embedder& embedder, const std::vector<std::string>& texts,
                  const std::vector<std::string>& keys, const SynonymOptions& options)
      : embedder_(embedder),
        texts_(texts),
        keys_(keys),
        options_(options),
        slot_(texts.size(), -1) {
    rows_.cols = embedder.Dimension();
    for (uint32_t i = 0; i < texts.size(); ++i) {
      for (const std::string& w : BlockingKeys(texts[i])) by_word_[w].push_back(i);
    }
  }

  // Candidate rows of `row` (sorted, itself included).
  std::vector<uint32_t> Candidates(uint32_t row) const {
    std::vector<uint32_t> cands;
    for (const std::string& w : BlockingKeys(texts_[row])) {
      auto it = by_word_.find(w);
      if (it == by_word_.end() || it->second.size() > options_.max_word_entities) continue;
      cands.insert(cands.end(), it->second.begin(), it->second.end());
    }
    std::sort(cands.begin(), cands.end());
    cands.erase(std::unique(cands.begin(), cands.end()), cands.end());
    return cands;
  }

  // Embeds the rows of `changed` and of all their candidates not embedded yet.
  Status Prepare(const std::vector<uint32_t>& changed) {
    std::vector<uint32_t> need;
    for (uint32_t r : changed) {
      need.push_back(r);
      for (uint32_t c : Candidates(r)) need.push_back(c);
    }
    std::sort(need.begin(), need.end());
    need.erase(std::unique(need.begin(), need.end()), need.end());
    std::vector<std::string> texts;
    std::vector<uint32_t> which;
    for (uint32_t r : need) {
      if (slot_[r] >= 0) continue;
      which.push_back(r);
      texts.push_back(texts_[r]);
    }
    FLOWRAG_ASSIGN_OR_RETURN(SparseRows part, EmbedSparse(embedder_, texts));
    for (size_t i = 0; i < which.size(); ++i) {
      slot_[which[i]] = static_cast<int64_t>(rows_.rows());
      rows_.AppendRow(part, i);
    }
    return Status::Ok();
  }

  // Whether the name has a vector at all (a name without any token has none).
  bool HasVector(uint32_t row) const { return slot_[row] >= 0 && rows_.RowNonZeros(slot_[row]) > 0; }

  // REQUIRES: Prepare() covered `row`.
  std::vector<VectorHit> Neighbours(uint32_t row) const {
    std::vector<VectorHit> hits;
    const auto a = static_cast<uint32_t>(slot_[row]);
    for (uint32_t c : Candidates(row)) {
      if (c == row) continue;
      const float score = rows_.DotRow(a, rows_, static_cast<uint32_t>(slot_[c]));
      if (score >= options_.threshold) hits.push_back({c, score});
    }
    std::sort(hits.begin(), hits.end(), [&](const VectorHit& x, const VectorHit& y) {
      if (x.score != y.score) return x.score > y.score;
      return keys_[x.id] != keys_[y.id] ? keys_[x.id] < keys_[y.id] : x.id < y.id;
    });
    if (hits.size() > options_.top_k) hits.resize(options_.top_k);
    return hits;
  }

 private:
  Embedder& embedder_;
  const std::vector<std::string>& texts_;
  const std::vector<std::string>& keys_;
  const SynonymOptions& options_;
  std::unordered_map<std::string, std::vector<uint32_t>> by_word_;
  std::vector<int64_t> slot_;  // row → its row in rows_, -1 while not embedded
  SparseRows rows_;
};

}  // namespace

Status UpdateSynonyms(const PhaseStores& stores, Embedder& embedder,
                      const SynonymOptions& options, size_t* entities_processed, size_t* edges) {
  *entities_processed = 0;
  *edges = 0;
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<int64_t> changed, stores.graph.EntitiesNeedingSynonyms());
  if (changed.empty()) return Status::Ok();
  std::vector<int64_t> ids;
  std::vector<std::string> names, texts, keys;
  FLOWRAG_RETURN_IF_ERROR(stores.graph_source.ForEachEntity([&](GraphSource::EntityRow&& e) -> Status {
    ids.push_back(e.id);
    texts.push_back(EntityText(e.name));
    keys.push_back(e.name + '\x1f' + e.type);
    names.push_back(std::move(e.name));
    return Status::Ok();
  }));
  std::unordered_map<int64_t, uint32_t> row_of;
  for (uint32_t i = 0; i < ids.size(); ++i) row_of.emplace(ids[i], i);

  // Per chunk: make the rows of `part` comparable, then its neighbours.
  std::function<Status(const std::vector<uint32_t>&)> prepare;
  std::function<bool(uint32_t)> has_vector;
  std::function<std::vector<VectorHit>(uint32_t)> neighbours;
  std::unique_ptr<LexicalSynonyms> lexical;
  FloatMatrix vectors;
  std::vector<bool> found;
  std::unique_ptr<VectorIndex> index;
  if (embedder.IsLocal()) {
    lexical = std::make_unique<LexicalSynonyms>(embedder, texts, keys, options);
    prepare = [&](const std::vector<uint32_t>& rows) { return lexical->Prepare(rows); };
    has_vector = [&](uint32_t row) { return lexical->HasVector(row); };
    neighbours = [&](uint32_t row) { return lexical->Neighbours(row); };
  } else {
    // A model's dense vectors, from the cache: exact kNN over all names.
    FLOWRAG_ASSIGN_OR_RETURN(vectors, GraphTextVectors(stores.embeddings, embedder, texts));
    if (vectors.cols == 0) return Status::Ok();  // no vectors yet: stay pending
    found.assign(vectors.rows, false);
    for (size_t r = 0; r < vectors.rows; ++r) {
      for (size_t d = 0; d < vectors.cols && !found[r]; ++d) found[r] = vectors.row(r)[d] != 0.0f;
    }
    VectorIndexOptions vo;
    vo.kind = "flat";
    FLOWRAG_ASSIGN_OR_RETURN(index, MakeVectorIndex(vectors.cols, ids.size(), vo));
    FLOWRAG_RETURN_IF_ERROR(index->Add(vectors));
    prepare = [](const std::vector<uint32_t>&) { return Status::Ok(); };
    has_vector = [&](uint32_t row) { return static_cast<bool>(found[row]); };
    neighbours = [&](uint32_t row) {
      VectorSearchParams params;
      params.k = options.top_k + 1;
      params.min_score = static_cast<float>(options.threshold);
      std::vector<VectorHit> hits;
      for (const VectorHit& h : index->Search(vectors.row(row), params, nullptr)) {
        if (h.id != row) hits.push_back(h);
      }
      return hits;
    };
  }

  // Commit in chunks so a crash keeps finished work.
  constexpr size_t kChunk = 2000;
  for (size_t start = 0; start < changed.size(); start += kChunk) {
    std::vector<int64_t> part(changed.begin() + start,
                              changed.begin() + std::min(changed.size(), start + kChunk));
    std::vector<uint32_t> part_rows;
    for (int64_t id : part) {
      auto it = row_of.find(id);
      if (it != row_of.end()) part_rows.push_back(it->second);
    }
    FLOWRAG_RETURN_IF_ERROR(prepare(part_rows));
    std::vector<GraphSource::SynonymRow> rows;
    std::vector<GraphSource::EntityRow> done;  // entities without a vector stay pending
    for (uint32_t row : part_rows) {
      if (!has_vector(row)) continue;
      const int64_t id = ids[row];
      done.push_back({id, names[row], ""});
      for (const VectorHit& hit : neighbours(row)) {
        const int64_t other = ids[hit.id];
        rows.push_back({std::min(id, other), std::max(id, other), hit.score});
      }
    }
    // A pair of two changed entities is found from both ends: keep it once.
    std::sort(rows.begin(), rows.end(), [](const GraphSource::SynonymRow& x, const GraphSource::SynonymRow& y) {
      return std::tie(x.a, x.b) < std::tie(y.a, y.b);
    });
    rows.erase(std::unique(rows.begin(), rows.end(),
                           [](const GraphSource::SynonymRow& x, const GraphSource::SynonymRow& y) {
                             return x.a == y.a && x.b == y.b;
                           }),
               rows.end());
    FLOWRAG_RETURN_IF_ERROR(stores.graph.ReplaceSynonyms(done, rows));
    *entities_processed += done.size();
    *edges += rows.size();
  }
  return Status::Ok();
}

Status BuildGraphExtras(const PhaseStores& stores, Embedder& embedder,
                        const ProgressCallback& progress,
                        size_t* texts_embedded, size_t* synonym_edges) {
  FLOWRAG_RETURN_IF_ERROR(EmbedGraphTexts(stores.graph_source, stores.embeddings, embedder, 512,
                                          progress, texts_embedded));
  size_t processed = 0;
  return UpdateSynonyms(stores, embedder, SynonymOptions{}, &processed, synonym_edges);
}

}  // namespace flowrag
