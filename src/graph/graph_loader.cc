#include "graph/graph_loader.h"

#include "common/hash.h"
#include "graph/graph_texts.h"
#include "vector/sparse_index.h"

namespace flowrag {
namespace {

Result<FloatMatrix> CachedVectors(Store& store, Embedder& embedder,
                                  const std::vector<std::string>& texts) {
  if (texts.empty()) return FloatMatrix();
  return GraphTextVectors(store, embedder, texts);
}

// Rows of one kind of text for a local embedder, reusing `previous`'s rows.
Result<SparseRows> LocalRows(Embedder& embedder, const std::vector<std::string>& texts,
                             const TextRows* previous, size_t* embedded) {
  size_t n = 0;
  FLOWRAG_ASSIGN_OR_RETURN(SparseRows rows, EmbedSparse(embedder, texts, previous, &n));
  *embedded += n;
  return rows;
}

}  // namespace

Result<FloatMatrix> GraphTextVectors(Store& store, Embedder& embedder,
                                     const std::vector<std::string>& texts) {
  if (embedder.IsLocal()) return embedder.Embed(texts);
  // A remote model's dimension is known once it has answered; after a
  // restart, from the vectors it left in the cache.
  size_t dim = embedder.Dimension();
  if (dim == 0) {
    FLOWRAG_ASSIGN_OR_RETURN(dim, store.EmbeddingDimension(embedder.ModelId()));
  }
  if (dim == 0) return FloatMatrix();
  std::vector<uint64_t> hashes;
  hashes.reserve(texts.size());
  for (const std::string& t : texts) hashes.push_back(Hash64(t));
  std::vector<bool> found;
  return store.GetEmbeddings(embedder.ModelId(), hashes, dim, &found);
}

Result<KnowledgeGraph::Input> LoadGraphRows(
    Store& store, const std::unordered_map<int64_t, uint32_t>& passage_index) {
  KnowledgeGraph::Input in;
  in.num_passages = passage_index.size();
  std::unordered_map<int64_t, uint32_t> entity_index;
  FLOWRAG_RETURN_IF_ERROR(store.ForEachEntity([&](Store::EntityRow&& e) -> Status {
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
  FLOWRAG_RETURN_IF_ERROR(store.ForEachMention([&](const Store::MentionRow& m) -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(uint32_t p, passage_of(m.passage_id, "mention"));
    FLOWRAG_ASSIGN_OR_RETURN(uint32_t e, entity_of(m.entity_id, "mention"));
    in.mentions.push_back({p, e, static_cast<float>(m.count), m.defining, m.title});
    return Status::Ok();
  }));
  FLOWRAG_RETURN_IF_ERROR(store.ForEachDescription([&](Store::DescriptionRow&& d) -> Status {
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
  std::unordered_map<std::string, uint32_t> fact_text_index;
  FLOWRAG_RETURN_IF_ERROR(store.ForEachFact([&](const Store::FactRow& f) -> Status {
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
    std::string text =
        FactText(in.entity_names[s], in.relation_texts[rel->second], in.entity_names[o]);
    auto [it, inserted] =
        fact_text_index.try_emplace(std::move(text), static_cast<uint32_t>(in.fact_texts.size()));
    if (inserted) in.fact_texts.push_back(it->first);
    in.fact_text.push_back(it->second);
    return Status::Ok();
  }));
  in.fact_sources.resize(in.fact_subject.size());
  FLOWRAG_RETURN_IF_ERROR(store.ForEachFactSource([&](int64_t fact, int64_t passage) -> Status {
    auto it = fact_index.find(fact);
    if (it == fact_index.end()) return Status::Ok();
    FLOWRAG_ASSIGN_OR_RETURN(uint32_t p, passage_of(passage, "fact source"));
    in.fact_sources[it->second].push_back(p);
    return Status::Ok();
  }));
  FLOWRAG_RETURN_IF_ERROR(store.ForEachSynonym([&](const Store::SynonymRow& s) -> Status {
    FLOWRAG_ASSIGN_OR_RETURN(uint32_t a, entity_of(s.a, "synonym"));
    FLOWRAG_ASSIGN_OR_RETURN(uint32_t b, entity_of(s.b, "synonym"));
    in.synonyms.push_back({a, b, static_cast<float>(s.similarity)});
    return Status::Ok();
  }));

  return in;
}

Result<GraphVectors> LoadGraphVectors(Store& store, const KnowledgeGraph::Input& rows,
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
  // Rows an earlier graph of the same embedder holds are copied, not embedded.
  const KnowledgeGraph* prev = options.previous;
  const bool reuse = prev != nullptr && options.previous_model == embedder.ModelId();
  auto previous = [&](const VectorIndex* index, const SparseRows* rows, size_t n,
                      const std::function<const std::string&(uint32_t)>& text) {
    return reuse ? TextRowsOf(index, rows, n, text) : TextRows();
  };
  GraphTextRows out;
  {
    const TextRows p = previous(prev ? prev->entity_index() : nullptr,
                                prev ? prev->entity_vectors() : nullptr,
                                prev ? prev->num_entities() : 0,
                                [&](uint32_t i) -> const std::string& { return prev->EntityName(i); });
    FLOWRAG_ASSIGN_OR_RETURN(out.entities, LocalRows(embedder, names, &p, embedded));
  }
  {
    const TextRows p = previous(prev ? prev->description_index() : nullptr, nullptr,
                                prev ? prev->num_descriptions() : 0,
                                [&](uint32_t i) -> const std::string& { return prev->DescriptionText(i); });
    FLOWRAG_ASSIGN_OR_RETURN(out.descriptions,
                             LocalRows(embedder, rows.description_texts, &p, embedded));
  }
  {
    const TextRows p = previous(prev ? prev->fact_index() : nullptr, nullptr,
                                prev ? prev->num_fact_texts() : 0,
                                [&](uint32_t i) -> const std::string& { return prev->FactTextOf(i); });
    FLOWRAG_ASSIGN_OR_RETURN(out.facts, LocalRows(embedder, rows.fact_texts, &p, embedded));
  }
  {
    const TextRows p = previous(nullptr, prev ? &prev->vectors()->relation_rows : nullptr,
                                prev ? prev->num_relations() : 0,
                                [&](uint32_t i) -> const std::string& { return prev->RelationText(i); });
    FLOWRAG_ASSIGN_OR_RETURN(out.relations, LocalRows(embedder, rows.relation_texts, &p, embedded));
  }
  return GraphVectorsFromRows(std::move(out));
}

Result<std::shared_ptr<const KnowledgeGraph>> LoadKnowledgeGraph(
    Store& store, const std::unordered_map<int64_t, uint32_t>& passage_index,
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
