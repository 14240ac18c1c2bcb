#include "graph/knowledge_graph.h"

#include <algorithm>
#include <cmath>
#include <tuple>


namespace flowrag {
namespace {

struct Entry {
  uint32_t from, to;
  float weight;
  uint32_t attr;
};

// CSR from directed entries; neighbours sorted by (target, attr).
Csr BuildCsr(size_t num_nodes, std::vector<Entry>& entries) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.from, a.to, a.attr) < std::tie(b.from, b.to, b.attr);
  });
  Csr csr;
  csr.offsets.assign(num_nodes + 1, 0);
  for (const Entry& e : entries) ++csr.offsets[e.from + 1];
  for (size_t i = 0; i < num_nodes; ++i) csr.offsets[i + 1] += csr.offsets[i];
  csr.targets.reserve(entries.size());
  csr.weights.reserve(entries.size());
  csr.attrs.reserve(entries.size());
  for (const Entry& e : entries) {
    csr.targets.push_back(e.to);
    csr.weights.push_back(e.weight);
    csr.attrs.push_back(e.attr);
  }
  return csr;
}

// numpy.percentile's default (linear interpolation between closest ranks).
float PercentileOf(std::vector<float> v, double p) {
  if (v.empty()) return 0.0f;
  std::sort(v.begin(), v.end());
  const double pos = p / 100.0 * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return static_cast<float>(v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo)));
}

}  // namespace

std::string_view NodeKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kPassage: return "Passage";
    case NodeKind::kEntity: return "Entity";
    case NodeKind::kDescription: return "EntityDescription";
    case NodeKind::kFact: return "Fact";
  }
  return "?";
}

std::string_view EdgeKindName(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::kMentions: return "MENTIONS";
    case EdgeKind::kRelatedTo: return "RELATED_TO";
    case EdgeKind::kDescribes: return "DESCRIBES";
    case EdgeKind::kSynonym: return "SYNONYM";
  }
  return "?";
}

void ComputeAbstractness(const FloatMatrix& passage_vectors,
                         const std::vector<std::vector<uint32_t>>& entity_passages,
                         std::vector<float>* raw, std::vector<float>* normalised) {
  const size_t d = passage_vectors.cols;
  raw->assign(entity_passages.size(), 0.0f);
  std::vector<double> mean(d);
  for (size_t e = 0; e < entity_passages.size(); ++e) {
    const auto& ps = entity_passages[e];
    if (ps.size() < 2 || d == 0) continue;
    // tr Cov = (1/n) Σ ||x_i||² − ||mean||².
    std::fill(mean.begin(), mean.end(), 0.0);
    double sq = 0.0;
    for (uint32_t p : ps) {
      const float* x = passage_vectors.row(p);
      for (size_t k = 0; k < d; ++k) {
        mean[k] += x[k];
        sq += static_cast<double>(x[k]) * x[k];
      }
    }
    const double n = static_cast<double>(ps.size());
    double mean_sq = 0.0;
    for (size_t k = 0; k < d; ++k) mean_sq += (mean[k] / n) * (mean[k] / n);
    (*raw)[e] = static_cast<float>(std::max(0.0, sq / n - mean_sq));
  }
  const float lo = PercentileOf(*raw, 1.0), hi = PercentileOf(*raw, 99.0);
  normalised->assign(raw->size(), 0.0f);
  if (hi <= lo) return;
  for (size_t e = 0; e < raw->size(); ++e) {
    (*normalised)[e] = std::clamp(((*raw)[e] - lo) / (hi - lo), 0.0f, 1.0f);
  }
}

Result<std::shared_ptr<const KnowledgeGraph>> KnowledgeGraph::Build(Input&& in) {
  auto g = std::shared_ptr<KnowledgeGraph>(new KnowledgeGraph());
  const size_t E = in.entity_names.size(), D = in.description_texts.size(),
               F = in.fact_subject.size();
  g->num_passages_ = in.num_passages;
  g->num_nodes_ = in.num_passages + E + D + F;
  g->entity_names_ = std::move(in.entity_names);
  g->entity_types_ = std::move(in.entity_types);
  g->entity_ids_ = std::move(in.entity_ids);
  g->description_texts_ = std::move(in.description_texts);
  g->description_entity_ = std::move(in.description_entity);
  g->description_passage_ = std::move(in.description_passage);
  g->fact_subject_ = std::move(in.fact_subject);
  g->fact_object_ = std::move(in.fact_object);
  g->fact_relation_ = std::move(in.fact_relation);
  g->relation_texts_ = std::move(in.relation_texts);
  g->fact_text_ = std::move(in.fact_text);
  g->fact_texts_ = std::move(in.fact_texts);
  g->facts_by_text_offsets_.assign(g->fact_texts_.size() + 1, 0);
  for (uint32_t t : g->fact_text_) ++g->facts_by_text_offsets_[t + 1];
  for (size_t t = 0; t < g->fact_texts_.size(); ++t) {
    g->facts_by_text_offsets_[t + 1] += g->facts_by_text_offsets_[t];
  }
  g->facts_by_text_.resize(F);
  {
    std::vector<uint64_t> next(g->facts_by_text_offsets_.begin(), g->facts_by_text_offsets_.end() - 1);
    for (uint32_t f = 0; f < F; ++f) g->facts_by_text_[next[g->fact_text_[f]]++] = f;
  }

  std::vector<Entry> entries;
  entries.reserve(2 * in.mentions.size());
  std::vector<std::vector<uint32_t>> entity_passages(E);
  for (const auto& m : in.mentions) {
    const uint32_t title = m.title ? 1 : 0;
    entries.push_back({m.passage, g->EntityNode(m.entity), m.count, title});
    entries.push_back({g->EntityNode(m.entity), m.passage, m.count, title});
    entity_passages[m.entity].push_back(m.passage);
  }
  g->edges_[static_cast<int>(EdgeKind::kMentions)] = BuildCsr(g->num_nodes_, entries);

  entries.clear();
  for (uint32_t f = 0; f < F; ++f) {
    const uint32_t s = g->EntityNode(g->fact_subject_[f]), o = g->EntityNode(g->fact_object_[f]);
    entries.push_back({s, o, 1.0f, f});
    entries.push_back({o, s, 1.0f, f});
  }
  g->edges_[static_cast<int>(EdgeKind::kRelatedTo)] = BuildCsr(g->num_nodes_, entries);

  entries.clear();
  for (uint32_t d = 0; d < D; ++d) {
    const uint32_t dn = g->DescriptionNode(d), en = g->EntityNode(g->description_entity_[d]);
    entries.push_back({dn, en, 1.0f, 0});
    entries.push_back({en, dn, 1.0f, 0});
  }
  g->edges_[static_cast<int>(EdgeKind::kDescribes)] = BuildCsr(g->num_nodes_, entries);

  entries.clear();
  for (const auto& s : in.synonyms) {
    entries.push_back({g->EntityNode(s.a), g->EntityNode(s.b), s.similarity, 0});
    entries.push_back({g->EntityNode(s.b), g->EntityNode(s.a), s.similarity, 0});
  }
  g->edges_[static_cast<int>(EdgeKind::kSynonym)] = BuildCsr(g->num_nodes_, entries);

  g->fact_source_offsets_.assign(F + 1, 0);
  for (uint32_t f = 0; f < F; ++f) {
    auto& src = in.fact_sources[f];
    std::sort(src.begin(), src.end());
    g->fact_source_offsets_[f + 1] = g->fact_source_offsets_[f] + src.size();
    g->fact_source_passages_.insert(g->fact_source_passages_.end(), src.begin(), src.end());
  }

  if (in.passage_vectors != nullptr && in.passage_vectors->cols > 0) {
    for (auto& ps : entity_passages) {
      std::sort(ps.begin(), ps.end());
      ps.erase(std::unique(ps.begin(), ps.end()), ps.end());
    }
    ComputeAbstractness(*in.passage_vectors, entity_passages, &g->raw_abstractness_,
                        &g->abstractness_);
  } else {
    g->raw_abstractness_.assign(E, 0.0f);
    g->abstractness_.assign(E, 0.0f);
  }

  g->vectors_ = in.vectors != nullptr ? std::move(in.vectors) : std::make_shared<GraphVectors>();
  g->walk_ = WalkGraph::Build(*g, WalkWeights{});
  return std::shared_ptr<const KnowledgeGraph>(std::move(g));
}

NodeKind KnowledgeGraph::Kind(uint32_t node) const {
  if (node < num_passages_) return NodeKind::kPassage;
  if (node < num_passages_ + num_entities()) return NodeKind::kEntity;
  if (node < num_passages_ + num_entities() + num_descriptions()) return NodeKind::kDescription;
  return NodeKind::kFact;
}

uint32_t KnowledgeGraph::LocalIndex(uint32_t node) const {
  switch (Kind(node)) {
    case NodeKind::kPassage: return node;
    case NodeKind::kEntity: return static_cast<uint32_t>(node - num_passages_);
    case NodeKind::kDescription:
      return static_cast<uint32_t>(node - num_passages_ - num_entities());
    case NodeKind::kFact:
      return static_cast<uint32_t>(node - num_passages_ - num_entities() - num_descriptions());
  }
  return 0;
}

size_t KnowledgeGraph::NumEdges(EdgeKind kind) const {
  return edges_[static_cast<int>(kind)].num_entries() / 2;
}

uint32_t KnowledgeGraph::EntityPassageCount(uint32_t e) const {
  const Csr& m = Edges(EdgeKind::kMentions);
  return static_cast<uint32_t>(m.Degree(EntityNode(e)));
}

size_t KnowledgeGraph::MemoryBytes() const {
  size_t bytes = 0;
  for (const Csr& c : edges_) {
    bytes += c.offsets.size() * 8 + c.targets.size() * 4 + c.weights.size() * 4 + c.attrs.size() * 4;
  }
  auto strings = [](const std::vector<std::string>& v) {
    size_t b = 0;
    for (const auto& s : v) b += s.capacity() + sizeof(std::string);
    return b;
  };
  bytes += strings(entity_names_) + strings(entity_types_) + strings(description_texts_) +
           strings(relation_texts_) + strings(fact_texts_);
  bytes += (fact_subject_.size() * 4 + facts_by_text_.size()) * 4 + facts_by_text_offsets_.size() * 8;
  bytes += (entity_ids_.size() * 8) + (abstractness_.size() + raw_abstractness_.size()) * 4;
  bytes += fact_source_offsets_.size() * 8 + fact_source_passages_.size() * 4;
  bytes += vectors_->MemoryBytes();
  bytes += walk_.MemoryBytes();
  return bytes;
}

}  // namespace flowrag
