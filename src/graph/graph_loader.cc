#include "graph/graph_loader.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <unordered_map>

#include "common/hash.h"
#include "graph/graph_texts.h"
#include "vector/sparse_index.h"

namespace flowrag {
namespace {

// GraphTextVectors over either interface that looks up cached vectors
// (EmbeddingCache for index runs, SnapshotSource for snapshots).
template <typename Cache>
Result<FloatMatrix> TextVectors(Cache& cache, Embedder& embedder,
                                const std::vector<std::string>& texts) {
  if (embedder.IsLocal()) return embedder.Embed(texts);
  // A remote model's dimension is known once it has answered; after a
  // restart, from the vectors it left in the cache.
  size_t dim = embedder.Dimension();
  if (dim == 0) {
    FLOWRAG_ASSIGN_OR_RETURN(dim, cache.EmbeddingDimension(embedder.ModelId()));
  }
  if (dim == 0) return FloatMatrix();
  std::vector<uint64_t> hashes;
  hashes.reserve(texts.size());
  for (const std::string& t : texts) hashes.push_back(Hash64(t));
  std::vector<bool> found;
  return cache.GetEmbeddings(embedder.ModelId(), hashes, dim, &found);
}

Result<FloatMatrix> CachedVectors(SnapshotSource& store, Embedder& embedder,
                                  const std::vector<std::string>& texts) {
  if (texts.empty()) return FloatMatrix();
  return TextVectors(store, embedder, texts);
}

// For one kind of text: which earlier text each text is (old_of_new, -1 for
// a new one), and the new ones in order. A text at its earlier position (an
// insert's entities and facts come after the earlier ones) matches without
// a lookup. Past the first difference, a rest of at most 1/32 of the earlier
// texts is embedded again rather than looked up (hashing every earlier text
// would cost more; the caller's embedder is local, so a text gets the same
// vector either way); a longer rest is looked up by text.
void MatchTexts(size_t old_count, const std::function<std::string_view(uint32_t)>& old_text,
                const std::vector<std::string>& texts, std::vector<int64_t>* old_of_new,
                std::vector<std::string>* fresh) {
  old_of_new->assign(texts.size(), -1);
  const size_t common = std::min(old_count, texts.size());
  size_t same = 0;
  for (; same < common && old_text(static_cast<uint32_t>(same)) == texts[same]; ++same) {
    (*old_of_new)[same] = static_cast<int64_t>(same);
  }
  if (texts.size() - same <= old_count / 32) {
    fresh->insert(fresh->end(), texts.begin() + static_cast<std::ptrdiff_t>(same), texts.end());
    return;
  }
  std::unordered_map<std::string_view, uint32_t> old_index;
  old_index.reserve(old_count);
  for (uint32_t i = 0; i < old_count; ++i) old_index.emplace(old_text(i), i);
  for (size_t i = same; i < texts.size(); ++i) {
    auto it = old_index.find(texts[i]);
    if (it != old_index.end()) {
      (*old_of_new)[i] = it->second;
    } else {
      fresh->push_back(texts[i]);
    }
  }
}

}  // namespace

Result<FloatMatrix> GraphTextVectors(EmbeddingCache& store, Embedder& embedder,
                                     const std::vector<std::string>& texts) {
  return TextVectors(store, embedder, texts);
}

Result<KnowledgeGraph::Input> LoadGraphRows(
    SnapshotSource& store, const std::unordered_map<int64_t, uint32_t>& passage_index) {
  KnowledgeGraph::Input in;
  in.num_passages = passage_index.size();
  std::unordered_map<int64_t, uint32_t> entity_index;
  FLOWRAG_RETURN_IF_ERROR(store.ForEachEntity([&](GraphSource::EntityRow&& e) -> Status {
    entity_index.emplace(e.id, static_cast<uint32_t>(in.entity_names.size()));
    in.entity_ids.push_back(e.id);
    in.entity_names.push_back(std::move(e.name));
    in.entity_types.push_back(std::move(e.type));
    return Status::Ok();
  }));
  if (in.entity_names.empty()) return in;

  auto passage_of = [&](int64_t id, const char* what) -> Result<uint32_t> {
    auto it = passage_index.find(id);
    if (it == passage_index.end()) {
      return Status::Corruption(store.path() + ": " + what + " refers to missing passage " +
                                std::to_string(id));
    }
    return it->second;
  };
  auto entity_of = [&](int64_t id, const char* what) -> Result<uint32_t> {
    auto it = entity_index.find(id);
    if (it == entity_index.end()) {
      return Status::Corruption(store.path() + ": " + what + " refers to missing entity " +
                                std::to_string(id));
    }
    return it->second;
  };
  FLOWRAG_RETURN_IF_ERROR(store.ForEachMention([&](const GraphSource::MentionRow& m) -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(uint32_t p, passage_of(m.passage_id, "mention"));
    FLOWRAG_ASSIGN_OR_RETURN(uint32_t e, entity_of(m.entity_id, "mention"));
    in.mentions.push_back({p, e, static_cast<float>(m.count), m.defining, m.title});
    return Status::Ok();
  }));
  FLOWRAG_RETURN_IF_ERROR(store.ForEachDescription([&](GraphSource::DescriptionRow&& d) -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(uint32_t p, passage_of(d.passage_id, "description"));
    FLOWRAG_ASSIGN_OR_RETURN(uint32_t e, entity_of(d.entity_id, "description"));
    in.description_entity.push_back(e);
    in.description_passage.push_back(p);
    in.description_texts.push_back(std::move(d.text));
    return Status::Ok();
  }));
  std::unordered_map<int64_t, uint32_t> relation_index;
  FLOWRAG_RETURN_IF_ERROR(store.ForEachRelation([&](int64_t id, std::string&& text) -> Status {
    relation_index.emplace(id, static_cast<uint32_t>(in.relation_texts.size()));
    in.relation_texts.push_back(std::move(text));
    return Status::Ok();
  }));
  std::unordered_map<int64_t, uint32_t> fact_index;
  FLOWRAG_RETURN_IF_ERROR(store.ForEachFact([&](const GraphSource::FactRow& f) -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(uint32_t s, entity_of(f.subject_id, "fact"));
    FLOWRAG_ASSIGN_OR_RETURN(uint32_t o, entity_of(f.object_id, "fact"));
    auto rel = relation_index.find(f.relation_id);
    if (rel == relation_index.end()) {
      return Status::Corruption(store.path() + ": fact " + std::to_string(f.id) +
                                " refers to missing relation " + std::to_string(f.relation_id));
    }
    fact_index.emplace(f.id, static_cast<uint32_t>(in.fact_subject.size()));
    in.fact_subject.push_back(s);
    in.fact_object.push_back(o);
    in.fact_relation.push_back(rel->second);
    return Status::Ok();
  }));
  AssignFactTexts(&in);
  in.fact_sources.resize(in.fact_subject.size());
  FLOWRAG_RETURN_IF_ERROR(store.ForEachFactSource([&](int64_t fact, int64_t passage) -> Status {
    auto it = fact_index.find(fact);
    if (it == fact_index.end()) return Status::Ok();
    FLOWRAG_ASSIGN_OR_RETURN(uint32_t p, passage_of(passage, "fact source"));
    in.fact_sources[it->second].push_back(p);
    return Status::Ok();
  }));
  FLOWRAG_RETURN_IF_ERROR(store.ForEachSynonym([&](const GraphSource::SynonymRow& s) -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(uint32_t a, entity_of(s.a, "synonym"));
    FLOWRAG_ASSIGN_OR_RETURN(uint32_t b, entity_of(s.b, "synonym"));
    in.synonyms.push_back({a, b, static_cast<float>(s.similarity)});
    return Status::Ok();
  }));

  return in;
}

void AssignFactTexts(KnowledgeGraph::Input* rows) {
  rows->fact_text.clear();
  rows->fact_texts.clear();
  const size_t F = rows->fact_subject.size();
  rows->fact_text.reserve(F);
  // Each name's key once (most entities and relations are in many facts).
  std::vector<std::string> entity_keys(rows->entity_names.size());
  std::vector<std::string> relation_keys(rows->relation_texts.size());
  const auto key_of = [](std::vector<std::string>& keys, const std::vector<std::string>& names,
                         uint32_t i) -> const std::string& {
    if (keys[i].empty()) keys[i] = PaddedKey(names[i]);  // never empty once computed
    return keys[i];
  };
  std::unordered_map<std::string, uint32_t> index;
  index.reserve(F);
  for (size_t f = 0; f < F; ++f) {
    const uint32_t s = rows->fact_subject[f], r = rows->fact_relation[f],
                   o = rows->fact_object[f];
    std::string text = FactTextOfKeys(
        rows->entity_names[s], key_of(entity_keys, rows->entity_names, s),
        rows->relation_texts[r], key_of(relation_keys, rows->relation_texts, r),
        rows->entity_names[o], key_of(entity_keys, rows->entity_names, o));
    auto [it, inserted] =
        index.try_emplace(std::move(text), static_cast<uint32_t>(rows->fact_texts.size()));
    if (inserted) rows->fact_texts.push_back(it->first);
    rows->fact_text.push_back(it->second);
  }
}

Result<GraphVectors> LoadGraphVectors(SnapshotSource& store, const KnowledgeGraph::Input& rows,
                                      const GraphLoadOptions& options, size_t* embedded) {
  *embedded = 0;
  if (options.embedder == nullptr || rows.entity_names.empty()) return GraphVectors();
  Embedder& embedder = *options.embedder;
  std::vector<std::string> names;
  names.reserve(rows.entity_names.size());
  for (const auto& n : rows.entity_names) names.push_back(EntityText(n));
  if (!embedder.IsLocal()) {
    FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix e, CachedVectors(store, embedder, names));
    FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix d, CachedVectors(store, embedder, rows.description_texts));
    FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix f, CachedVectors(store, embedder, rows.fact_texts));
    FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix r, CachedVectors(store, embedder, rows.relation_texts));
    return GraphVectorsFromDense(e, d, f, r, options.vector);
  }
  const KnowledgeGraph* prev = options.previous;
  if (prev == nullptr || options.previous_model != embedder.ModelId()) {
    *embedded = names.size() + rows.description_texts.size() + rows.fact_texts.size() +
                rows.relation_texts.size();
    return EmbedGraphVectors(embedder, names, rows.description_texts, rows.fact_texts,
                             rows.relation_texts);
  }
  // An earlier graph of the same embedder: its vectors are renumbered, only
  // texts it does not hold are embedded.
  VectorRemap remap;
  std::vector<std::string> fresh;
  auto kind = [&](size_t old_count, const std::function<std::string_view(uint32_t)>& old_text,
                  const std::vector<std::string>& texts, std::vector<int64_t>* old_of_new,
                  SparseRows* fresh_rows) -> Status {
    fresh.clear();
    MatchTexts(old_count, old_text, texts, old_of_new, &fresh);
    FLOWRAG_ASSIGN_OR_RETURN(*fresh_rows, EmbedSparse(embedder, fresh));
    *embedded += fresh.size();
    return Status::Ok();
  };
  FLOWRAG_RETURN_IF_ERROR(kind(
      prev->num_entities(), [&](uint32_t i) -> std::string_view { return prev->EntityName(i); },
      names, &remap.entities, &remap.fresh.entities));
  FLOWRAG_RETURN_IF_ERROR(kind(
      prev->num_descriptions(),
      [&](uint32_t i) -> std::string_view { return prev->DescriptionText(i); },
      rows.description_texts, &remap.descriptions, &remap.fresh.descriptions));
  FLOWRAG_RETURN_IF_ERROR(kind(
      prev->num_fact_texts(), [&](uint32_t i) -> std::string_view { return prev->FactTextOf(i); },
      rows.fact_texts, &remap.facts, &remap.fresh.facts));
  FLOWRAG_RETURN_IF_ERROR(kind(
      prev->num_relations(), [&](uint32_t i) -> std::string_view { return prev->RelationText(i); },
      rows.relation_texts, &remap.relations, &remap.fresh.relations));
  return RemapGraphVectors(*prev->vectors(), remap);
}

Result<std::shared_ptr<const KnowledgeGraph>> LoadKnowledgeGraph(
    SnapshotSource& store, const std::unordered_map<int64_t, uint32_t>& passage_index,
    const FloatMatrix& passage_vectors, const GraphLoadOptions& options) {
  FLOWRAG_ASSIGN_OR_RETURN(KnowledgeGraph::Input in, LoadGraphRows(store, passage_index));
  if (in.entity_names.empty()) return std::shared_ptr<const KnowledgeGraph>();
  size_t embedded = 0;
  FLOWRAG_ASSIGN_OR_RETURN(GraphVectors vectors, LoadGraphVectors(store, in, options, &embedded));
  in.vectors = std::make_shared<const GraphVectors>(std::move(vectors));
  in.passage_vectors = &passage_vectors;
  return KnowledgeGraph::Build(std::move(in));
}

}  // namespace flowrag
