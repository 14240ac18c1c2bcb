#include "graph/graph_rows_update.h"

namespace flowrag {
namespace {

// Keeps v[i] where keep[i], in order.
template <typename T>
void Filter(std::vector<T>* v, const std::vector<bool>& keep) {
  size_t out = 0;
  for (size_t i = 0; i < v->size(); ++i) {
    if (!keep[i]) continue;
    if (out != i) (*v)[out] = std::move((*v)[i]);  // a self-move may empty a string
    ++out;
  }
  v->resize(out);
}

// Dense new indexes of the kept items (-1 for the others); *kept counts them.
std::vector<int64_t> Renumber(const std::vector<bool>& keep, size_t* kept = nullptr) {
  std::vector<int64_t> new_of_old(keep.size(), -1);
  int64_t next = 0;
  for (size_t i = 0; i < keep.size(); ++i) {
    if (keep[i]) new_of_old[i] = next++;
  }
  if (kept != nullptr) *kept = static_cast<size_t>(next);
  return new_of_old;
}

}  // namespace

GraphRowsRemoval RemovePassages(KnowledgeGraph::Input in, const std::vector<bool>& removed) {
  GraphRowsRemoval out;
  const size_t E = in.entity_names.size();
  std::vector<bool> kept_passages(in.num_passages);
  for (size_t p = 0; p < kept_passages.size(); ++p) kept_passages[p] = !removed[p];
  size_t num_passages = 0;
  const std::vector<int64_t> new_passage = Renumber(kept_passages, &num_passages);

  // Entities live while a remaining passage defines them.
  std::vector<bool> defined(E, false), touched(E, false);
  for (const auto& m : in.mentions) {
    if (removed[m.passage]) {
      touched[m.entity] = true;
    } else if (m.defining) {
      defined[m.entity] = true;
    }
  }
  const std::vector<int64_t> new_entity = Renumber(defined);

  std::vector<bool> keep;
  keep.assign(in.mentions.size(), false);
  for (size_t i = 0; i < in.mentions.size(); ++i) {
    const auto& m = in.mentions[i];
    keep[i] = !removed[m.passage] && defined[m.entity];
  }
  Filter(&in.mentions, keep);
  for (auto& m : in.mentions) {
    m.passage = static_cast<uint32_t>(new_passage[m.passage]);
    m.entity = static_cast<uint32_t>(new_entity[m.entity]);
  }

  keep.assign(in.description_texts.size(), false);
  for (size_t d = 0; d < keep.size(); ++d) {
    keep[d] = !removed[in.description_passage[d]] && defined[in.description_entity[d]];
  }
  Filter(&in.description_entity, keep);
  Filter(&in.description_passage, keep);
  Filter(&in.description_texts, keep);
  for (auto& e : in.description_entity) e = static_cast<uint32_t>(new_entity[e]);
  for (auto& p : in.description_passage) p = static_cast<uint32_t>(new_passage[p]);

  // Facts live while both entities do and a remaining passage states them;
  // relations while a living fact uses them.
  const size_t F = in.fact_subject.size();
  keep.assign(F, false);
  std::vector<bool> used(in.relation_texts.size(), false);
  for (size_t f = 0; f < F; ++f) {
    auto& sources = in.fact_sources[f];
    size_t n = 0;
    for (uint32_t p : sources) {
      if (!removed[p]) sources[n++] = static_cast<uint32_t>(new_passage[p]);
    }
    sources.resize(n);
    keep[f] = n > 0 && defined[in.fact_subject[f]] && defined[in.fact_object[f]];
    if (keep[f]) used[in.fact_relation[f]] = true;
  }
  Filter(&in.fact_subject, keep);
  Filter(&in.fact_object, keep);
  Filter(&in.fact_relation, keep);
  Filter(&in.fact_sources, keep);
  for (auto& e : in.fact_subject) e = static_cast<uint32_t>(new_entity[e]);
  for (auto& e : in.fact_object) e = static_cast<uint32_t>(new_entity[e]);
  const std::vector<int64_t> new_relation = Renumber(used);
  Filter(&in.relation_texts, used);
  for (auto& r : in.fact_relation) r = static_cast<uint32_t>(new_relation[r]);
  in.fact_text.clear();
  in.fact_texts.clear();

  keep.assign(in.synonyms.size(), false);
  for (size_t i = 0; i < keep.size(); ++i) {
    keep[i] = defined[in.synonyms[i].a] && defined[in.synonyms[i].b];
  }
  Filter(&in.synonyms, keep);
  for (auto& s : in.synonyms) {
    s.a = static_cast<uint32_t>(new_entity[s.a]);
    s.b = static_cast<uint32_t>(new_entity[s.b]);
  }

  Filter(&in.entity_names, defined);
  Filter(&in.entity_types, defined);
  Filter(&in.entity_ids, defined);
  for (size_t e = 0; e < E; ++e) {
    if (defined[e] && touched[e]) out.touched.push_back(static_cast<uint32_t>(new_entity[e]));
  }
  in.num_passages = num_passages;
  in.vectors.reset();
  in.passage_vectors = nullptr;
  out.rows = std::move(in);
  return out;
}

}  // namespace flowrag
