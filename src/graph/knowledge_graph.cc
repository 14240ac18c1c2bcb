#include "graph/knowledge_graph.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <unordered_map>

namespace flowrag {
namespace {

struct Entry {
  uint32_t from, to;
  float weight;
  uint32_t attr;
};

// CSR from directed entries; neighbours sorted by (target, attr). The
// entries are placed by source node in one counting pass, then each node's
// few neighbours sorted: O(entries + nodes + Σ d log d), where one sort of
// every entry was O(E log E) (half of a 10^5-passage graph's build).
Csr BuildCsr(size_t num_nodes, const std::vector<Entry>& entries) {
  std::vector<uint64_t> offsets(num_nodes + 1, 0);
  for (const Entry& e : entries) ++offsets[e.from + 1];
  for (size_t i = 0; i < num_nodes; ++i) offsets[i + 1] += offsets[i];
  std::vector<Entry> placed(entries.size());
  std::vector<uint64_t> next(offsets.begin(), offsets.end() - 1);
  for (const Entry& e : entries) placed[next[e.from]++] = e;
  for (size_t n = 0; n < num_nodes; ++n) {
    if (offsets[n + 1] - offsets[n] < 2) continue;
    std::sort(placed.begin() + offsets[n], placed.begin() + offsets[n + 1],
              [](const Entry& a, const Entry& b) {
                return std::tie(a.to, a.attr) < std::tie(b.to, b.attr);
              });
  }
  std::vector<uint32_t> targets, attrs;
  std::vector<float> weights;
  targets.reserve(placed.size());
  weights.reserve(placed.size());
  attrs.reserve(placed.size());
  for (const Entry& e : placed) {
    targets.push_back(e.to);
    weights.push_back(e.weight);
    attrs.push_back(e.attr);
  }
  // The nodes after the last one with an edge get no offsets (Csr::rows).
  while (offsets.size() > 1 && offsets[offsets.size() - 2] == offsets.back()) offsets.pop_back();
  Csr csr;
  csr.offsets = std::move(offsets);
  csr.targets = std::move(targets);
  csr.weights = std::move(weights);
  csr.attrs = std::move(attrs);
  return csr;
}

// The strings as one arena; `strings` is emptied.
StringArena ArenaOf(std::vector<std::string>&& strings) {
  size_t bytes = 0;
  for (const std::string& s : strings) bytes += s.size();
  StringArena arena;
  arena.Reserve(strings.size(), bytes);
  for (const std::string& s : strings) arena.Append(s);
  std::vector<std::string>().swap(strings);
  return arena;
}

// numpy.percentile's default (linear interpolation between closest ranks).
// O(n): the two order statistics by selection, not a sort.
float PercentileOf(std::vector<float> v, double p) {
  if (v.empty()) return 0.0f;
  const double pos = p / 100.0 * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  std::nth_element(v.begin(), v.begin() + lo, v.end());
  const float at_lo = v[lo];
  // The next order statistic is the least of what selection left above lo.
  const float at_hi = hi == lo ? at_lo : *std::min_element(v.begin() + lo + 1, v.end());
  return static_cast<float>(at_lo + (at_hi - at_lo) * (pos - static_cast<double>(lo)));
}

}  // namespace

std::string_view NodeKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kPassage:
      return "Passage";
    case NodeKind::kEntity:
      return "Entity";
    case NodeKind::kDescription:
      return "EntityDescription";
    case NodeKind::kFact:
      return "Fact";
  }
  return "?";
}

std::string_view EdgeKindName(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::kMentions:
      return "MENTIONS";
    case EdgeKind::kRelatedTo:
      return "RELATED_TO";
    case EdgeKind::kDescribes:
      return "DESCRIBES";
    case EdgeKind::kSynonym:
      return "SYNONYM";
  }
  return "?";
}

namespace {

// raw[e] = tr Cov of the vectors of entity e's passages, for every e not
// `known` (those keep theirs). O(Σ|P(v)|·d) over the entities computed.
void ComputeRawAbstractness(const PassageVectorRows& vectors,
                            const std::vector<std::vector<uint32_t>>& entity_passages,
                            const std::vector<char>& known, std::vector<float>* raw) {
  const size_t d = vectors.dim();
  std::vector<double> mean(d);
  std::vector<float> scratch(d);
  for (size_t e = 0; e < entity_passages.size(); ++e) {
    const auto& ps = entity_passages[e];
    if (known[e] || ps.size() < 2 || d == 0) continue;
    // tr Cov = (1/n) Σ ||x_i||² − ||mean||².
    std::fill(mean.begin(), mean.end(), 0.0);
    double sq = 0.0;
    for (uint32_t p : ps) {
      const float* x = vectors.row(p, scratch.data());
      if (x == nullptr) continue;  // zeros
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
}

// Clipped to the 1st-99th percentile over all entities, min-max scaled.
void NormaliseAbstractness(const std::vector<float>& raw, std::vector<float>* normalised) {
  const float lo = PercentileOf(raw, 1.0), hi = PercentileOf(raw, 99.0);
  normalised->assign(raw.size(), 0.0f);
  if (hi <= lo) return;
  for (size_t e = 0; e < raw.size(); ++e) {
    (*normalised)[e] = std::clamp((raw[e] - lo) / (hi - lo), 0.0f, 1.0f);
  }
}

// Marks (and fills raw[e] for) the entities of `g` (being built from `in`)
// whose passages map one to one, in order, through in.previous_rows to
// their passages in in.previous (found by store id): their raw
// abstractness is the earlier graph's. O(E + E' + the mentions of the
// entities compared).
std::vector<char> ReuseAbstractness(const KnowledgeGraph& g, const KnowledgeGraph::Input& in,
                                    const std::vector<std::vector<uint32_t>>& entity_passages,
                                    std::vector<float>* raw) {
  std::vector<char> known(entity_passages.size(), 0);
  const KnowledgeGraph* prev = in.previous;
  if (prev == nullptr || in.previous_rows.size() != in.num_passages) return known;
  std::unordered_map<int64_t, uint32_t> by_id;
  by_id.reserve(prev->num_entities());
  for (uint32_t e = 0; e < prev->num_entities(); ++e) by_id.emplace(prev->EntityStoreId(e), e);
  const Csr& mentions = prev->Edges(EdgeKind::kMentions);
  std::vector<uint32_t> theirs;
  for (size_t e = 0; e < entity_passages.size(); ++e) {
    const auto it = by_id.find(g.EntityStoreId(static_cast<uint32_t>(e)));
    if (it == by_id.end()) continue;
    const uint32_t node = prev->EntityNode(it->second);
    theirs.assign(mentions.targets.begin() + mentions.Begin(node),
                  mentions.targets.begin() + mentions.End(node));
    theirs.erase(std::unique(theirs.begin(), theirs.end()), theirs.end());
    const auto& ours = entity_passages[e];
    bool same = ours.size() == theirs.size();
    for (size_t i = 0; same && i < ours.size(); ++i) {
      same = in.previous_rows[ours[i]] == theirs[i];
    }
    if (!same) continue;
    (*raw)[e] = prev->RawAbstractness(it->second);
    known[e] = 1;
  }
  return known;
}

}  // namespace

void ComputeAbstractness(const FloatMatrix& passage_vectors,
                         const std::vector<std::vector<uint32_t>>& entity_passages,
                         std::vector<float>* raw, std::vector<float>* normalised) {
  raw->assign(entity_passages.size(), 0.0f);
  ComputeRawAbstractness(&passage_vectors, entity_passages,
                         std::vector<char>(entity_passages.size(), 0), raw);
  NormaliseAbstractness(*raw, normalised);
}

Result<std::shared_ptr<const KnowledgeGraph>> KnowledgeGraph::Build(Input&& in) {
  auto g = std::shared_ptr<KnowledgeGraph>(new KnowledgeGraph());
  const size_t E = in.entity_names.size(), D = in.description_texts.size(),
               F = in.fact_subject.size(), T = in.fact_texts.size();
  g->num_passages_ = PassageSlots(in.num_passages);
  g->num_nodes_ = g->num_passages_ + E + D + F;
  g->entity_names_ = ArenaOf(std::move(in.entity_names));
  g->entity_types_ = ArenaOf(std::move(in.entity_types));
  g->entity_ids_ = std::move(in.entity_ids);
  g->description_texts_ = ArenaOf(std::move(in.description_texts));
  g->description_entity_ = std::move(in.description_entity);
  g->description_passage_ = std::move(in.description_passage);
  g->fact_subject_ = std::move(in.fact_subject);
  g->fact_object_ = std::move(in.fact_object);
  g->fact_relation_ = std::move(in.fact_relation);
  g->relation_texts_ = ArenaOf(std::move(in.relation_texts));
  g->fact_text_ = std::move(in.fact_text);
  g->fact_texts_ = ArenaOf(std::move(in.fact_texts));
  {
    std::vector<uint64_t> offsets(T + 1, 0);
    for (uint32_t t : g->fact_text_) ++offsets[t + 1];
    for (size_t t = 0; t < T; ++t) offsets[t + 1] += offsets[t];
    std::vector<uint32_t> facts(F);
    std::vector<uint64_t> next(offsets.begin(), offsets.end() - 1);
    for (uint32_t f = 0; f < F; ++f) facts[next[g->fact_text_[f]]++] = f;
    g->facts_by_text_offsets_ = std::move(offsets);
    g->facts_by_text_ = std::move(facts);
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

  {
    std::vector<uint64_t> offsets(F + 1, 0);
    std::vector<uint32_t> passages;
    for (uint32_t f = 0; f < F; ++f) {
      auto& src = in.fact_sources[f];
      std::sort(src.begin(), src.end());
      offsets[f + 1] = offsets[f] + src.size();
      passages.insert(passages.end(), src.begin(), src.end());
    }
    g->fact_source_offsets_ = std::move(offsets);
    g->fact_source_passages_ = std::move(passages);
  }

  std::vector<float> raw(E, 0.0f), normalised;
  if (!in.passage_vectors.empty()) {
    for (auto& ps : entity_passages) {
      std::sort(ps.begin(), ps.end());
      ps.erase(std::unique(ps.begin(), ps.end()), ps.end());
    }
    const std::vector<char> known = ReuseAbstractness(*g, in, entity_passages, &raw);
    ComputeRawAbstractness(in.passage_vectors, entity_passages, known, &raw);
  }
  NormaliseAbstractness(raw, &normalised);
  g->raw_abstractness_ = std::move(raw);
  g->abstractness_ = std::move(normalised);

  g->vectors_ = in.vectors != nullptr ? std::move(in.vectors) : std::make_shared<GraphVectors>();
  g->walk_ = WalkGraph::Build(*g, WalkWeights{});
  return std::shared_ptr<const KnowledgeGraph>(std::move(g));
}

size_t PassageSlots(size_t passages) {
  if (passages == 0) return 0;
  const int log2 = static_cast<int>(std::bit_width(passages)) - 1;
  const size_t granule = size_t{1} << std::max(0, log2 - 5);
  return (passages + granule - 1) / granule * granule;
}

NodeKind KnowledgeGraph::Kind(uint32_t node) const {
  if (node < num_passages_) return NodeKind::kPassage;
  if (node < num_passages_ + num_entities()) return NodeKind::kEntity;
  if (node < num_passages_ + num_entities() + num_descriptions()) return NodeKind::kDescription;
  return NodeKind::kFact;
}

uint32_t KnowledgeGraph::LocalIndex(uint32_t node) const {
  switch (Kind(node)) {
    case NodeKind::kPassage:
      return node;
    case NodeKind::kEntity:
      return static_cast<uint32_t>(node - num_passages_);
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
    bytes += c.offsets.bytes() + c.targets.bytes() + c.weights.bytes() + c.attrs.bytes();
  }
  bytes += entity_names_.memory_bytes() + entity_types_.memory_bytes() +
           description_texts_.memory_bytes() + relation_texts_.memory_bytes() +
           fact_texts_.memory_bytes();
  bytes += entity_ids_.bytes() + abstractness_.bytes() + raw_abstractness_.bytes();
  bytes += description_entity_.bytes() + description_passage_.bytes();
  bytes +=
      fact_subject_.bytes() + fact_object_.bytes() + fact_relation_.bytes() + fact_text_.bytes();
  bytes += facts_by_text_offsets_.bytes() + facts_by_text_.bytes();
  bytes += fact_source_offsets_.bytes() + fact_source_passages_.bytes();
  bytes += vectors_->MemoryBytes();
  bytes += walk_.MemoryBytes();
  return bytes;
}

}  // namespace flowrag
