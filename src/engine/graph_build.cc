#include "engine/graph_build.h"

#include <algorithm>
#include <functional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "common/hash.h"
#include "common/progress.h"
#include "graph/graph_loader.h"
#include "graph/graph_texts.h"
#include "common/text.h"
#include "vector/sparse_index.h"

namespace flowrag {

Status EmbedGraphTexts(Store& store, Embedder& embedder, size_t batch_size, bool progress,
                       size_t* embedded) {
  *embedded = 0;
  if (embedder.IsLocal()) return Status::Ok();  // embedded when snapshots are built
  const std::string model = embedder.ModelId();
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<uint64_t> have_list, store.EmbeddingHashes(model));
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
  FLOWRAG_RETURN_IF_ERROR(store.ForEachEntity([&](Store::EntityRow&& e) -> Status {
    want(EntityText(e.name));
    names.emplace(e.id, std::move(e.name));
    return Status::Ok();
  }));
  FLOWRAG_RETURN_IF_ERROR(store.ForEachDescription([&](Store::DescriptionRow&& d) -> Status {
    want(std::move(d.text));
    return Status::Ok();
  }));
  std::unordered_map<int64_t, std::string> relations;
  FLOWRAG_RETURN_IF_ERROR(store.ForEachRelation([&](int64_t id, std::string&& text) -> Status {
    want(text);
    relations.emplace(id, std::move(text));
    return Status::Ok();
  }));
  FLOWRAG_RETURN_IF_ERROR(store.ForEachFact([&](const Store::FactRow& f) -> Status {
    want(FactText(names[f.subject_id], relations[f.relation_id], names[f.object_id]));
    return Status::Ok();
  }));
  Progress meter("embed graph", "texts", texts.size(), progress);
  for (size_t start = 0; start < texts.size(); start += batch_size) {
    const size_t n = std::min(batch_size, texts.size() - start);
    std::span<const std::string> part(texts.data() + start, n);
    FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix vectors, embedder.Embed(part));
    FLOWRAG_RETURN_IF_ERROR(store.PutEmbeddings(
        model, std::span<const uint64_t>(hashes.data() + start, n), vectors));
    *embedded += n;
    meter.Advance(n);
  }
  meter.Finish();
  return Status::Ok();
}

Status UpdateSynonyms(Store& store, Embedder& embedder, const SynonymOptions& options,
                      size_t* entities_processed, size_t* edges) {
  *entities_processed = 0;
  *edges = 0;
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<int64_t> changed, store.EntitiesNeedingSynonyms());
  if (changed.empty()) return Status::Ok();
  std::vector<int64_t> ids;
  std::vector<std::string> texts;
  FLOWRAG_RETURN_IF_ERROR(store.ForEachEntity([&](Store::EntityRow&& e) -> Status {
    ids.push_back(e.id);
    texts.push_back(EntityText(e.name));
    return Status::Ok();
  }));
  FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix vectors, GraphTextVectors(store, embedder, texts));
  if (vectors.cols == 0) return Status::Ok();  // no vectors yet: stay pending
  std::vector<bool> found(vectors.rows, false);
  for (size_t r = 0; r < vectors.rows; ++r) {
    for (size_t d = 0; d < vectors.cols && !found[r]; ++d) found[r] = vectors.row(r)[d] != 0.0f;
  }
  std::unordered_map<int64_t, uint32_t> row_of;
  for (uint32_t i = 0; i < ids.size(); ++i) row_of.emplace(ids[i], i);

  // Candidates of one entity (row), best first, above the threshold.
  std::function<std::vector<VectorHit>(uint32_t)> neighbours;
  std::unique_ptr<VectorIndex> index;
  std::unordered_map<std::string, std::vector<uint32_t>> by_word;
  if (Density(vectors) < 0.25) {
    // Lexical (hashed) vectors: a cosine of 0.8 needs most of the words'
    // weight in common, whole words or their character n-grams (spelling
    // variants: "organisation"/"organization"). Candidates are the entities
    // sharing a word prefix of up to 4 characters (prefixes naming more than
    // max_word_entities entities are no key); then exact cosines.
    // O(changed · candidates · d) instead of all pairs. The blocking also
    // keeps out hash-bucket collisions: a one-word name's unigram carries 80%
    // of its squared norm, so two unrelated one-word names whose unigrams
    // share a bucket and sign score 0.8 ("Kentucky" ~ "2018" in musique-train;
    // exact search over all pairs finds 3,389 edges there, 1,365 of them such
    // collisions, against 2,024 with blocking).
    auto keys = [](const std::string& text) {
      std::vector<std::string> out;
      for (std::string w : Tokenize(text)) {
        if (w.size() > 4) w.resize(4);
        out.push_back(std::move(w));
      }
      std::sort(out.begin(), out.end());
      out.erase(std::unique(out.begin(), out.end()), out.end());
      return out;
    };
    for (uint32_t i = 0; i < texts.size(); ++i) {
      for (const std::string& w : keys(texts[i])) by_word[w].push_back(i);
    }
    neighbours = [&](uint32_t row) {
      std::vector<uint32_t> cands;
      for (const std::string& w : keys(texts[row])) {
        auto it = by_word.find(w);
        if (it == by_word.end() || it->second.size() > options.max_word_entities) continue;
        cands.insert(cands.end(), it->second.begin(), it->second.end());
      }
      std::sort(cands.begin(), cands.end());
      cands.erase(std::unique(cands.begin(), cands.end()), cands.end());
      std::vector<VectorHit> hits;
      for (uint32_t c : cands) {
        const float score = DotProduct(vectors.row(row), vectors.row(c), vectors.cols);
        if (c != row && score >= options.threshold) hits.push_back({c, score});
      }
      std::sort(hits.begin(), hits.end(), [](const VectorHit& a, const VectorHit& b) {
        return a.score != b.score ? a.score > b.score : a.id < b.id;
      });
      if (hits.size() > options.top_k) hits.resize(options.top_k);
      return hits;
    };
  } else {
    VectorIndexOptions vo;
    vo.kind = "flat";
    FLOWRAG_ASSIGN_OR_RETURN(index, MakeVectorIndex(vectors.cols, ids.size(), vo));
    FLOWRAG_RETURN_IF_ERROR(index->Add(vectors));
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
    std::vector<Store::SynonymRow> rows;
    std::vector<int64_t> done;  // entities without a vector stay pending
    for (int64_t id : part) {
      auto it = row_of.find(id);
      if (it == row_of.end() || !found[it->second]) continue;
      done.push_back(id);
      for (const VectorHit& hit : neighbours(it->second)) {
        const int64_t other = ids[hit.id];
        rows.push_back({std::min(id, other), std::max(id, other), hit.score});
      }
    }
    // A pair of two changed entities is found from both ends: keep it once.
    std::sort(rows.begin(), rows.end(), [](const Store::SynonymRow& x, const Store::SynonymRow& y) {
      return std::tie(x.a, x.b) < std::tie(y.a, y.b);
    });
    rows.erase(std::unique(rows.begin(), rows.end(),
                           [](const Store::SynonymRow& x, const Store::SynonymRow& y) {
                             return x.a == y.a && x.b == y.b;
                           }),
               rows.end());
    FLOWRAG_RETURN_IF_ERROR(store.ReplaceSynonyms(done, rows));
    *entities_processed += done.size();
    *edges += rows.size();
  }
  return Status::Ok();
}

}  // namespace flowrag
