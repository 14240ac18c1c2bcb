#include "sql/schema_linker.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <unordered_set>

#include "common/text.h"
#include "embed/hashed_embedder.h"
#include "graph_algo/flow_diffusion.h"
#include "retrieval/keywords.h"
#include "vector/vector_index.h"

namespace flowrag {
namespace {

constexpr double kStabiliser = 1e-10;  // A2.2.1

// The schema graph with the query-aware weights of Eq. 5.
class SchemaDiffusionGraph final : public DiffusionGraph {
 public:
  SchemaDiffusionGraph(const SchemaGraph& g, const FloatMatrix& vectors, const float* query,
                       const SchemaLinkOptions& o, EdgeWeighting weighting, SimilarityKind similarity)
      : g_(g), v_(vectors), q_(query), o_(o), weighting_(weighting), similarity_(similarity) {}

  size_t num_nodes() const override { return g_.num_nodes(); }
  size_t Degree(uint32_t u) const override { return g_.Degree(u); }
  void Neighbors(uint32_t u, std::vector<uint32_t>* out) const override {
    const auto& off = g_.adjacency_offsets();
    out->insert(out->end(), g_.adjacency().begin() + off[u], g_.adjacency().begin() + off[u + 1]);
  }
  void WeightedNeighbors(uint32_t u, std::vector<uint32_t>* nodes,
                         std::vector<double>* weights) const override {
    const auto& off = g_.adjacency_offsets();
    const double s_uq = Sim(v_.row(u), q_);
    for (uint32_t i = off[u]; i < off[u + 1]; ++i) {
      const uint32_t v = g_.adjacency()[i];
      nodes->push_back(v);
      weights->push_back(QueryAwareWeight(weighting_, Sim(v_.row(u), v_.row(v)), s_uq,
                                          Sim(v_.row(v), q_), o_.a, o_.b) +
                         kStabiliser);
    }
  }

 private:
  double Sim(const float* a, const float* b) const {
    return SimilarityFromCosine(similarity_, DotProduct(a, b, v_.cols), o_.rbf_gamma);
  }
  const SchemaGraph& g_;
  const FloatMatrix& v_;
  const float* q_;
  const SchemaLinkOptions& o_;
  EdgeWeighting weighting_;
  SimilarityKind similarity_;
};

// True when `words` occurs in `key` on word boundaries (both EntityKeys:
// lower-case words separated by single spaces).
bool ContainsWords(std::string_view key, std::string_view words) {
  if (words.empty()) return false;
  for (size_t at = key.find(words); at != std::string_view::npos; at = key.find(words, at + 1)) {
    const size_t end = at + words.size();
    if ((at == 0 || key[at - 1] == ' ') && (end == key.size() || key[end] == ' ')) return true;
  }
  return false;
}

std::vector<std::string> OwnNameWords(const SchemaGraph& g, uint32_t node) {
  const std::string& name =
      g.Kind(node) == SchemaNodeKind::kTable ? g.tables[node].name : g.columns[g.ColumnOf(node)].name;
  return Tokenize(SplitIdentifier(name));
}

}  // namespace

Result<LinkMethod> ParseLinkMethod(std::string_view name) {
  if (name == "qafd") return LinkMethod::kQafd;
  if (name == "all") return LinkMethod::kAll;
  if (name == "bm25") return LinkMethod::kBm25;
  if (name == "dense") return LinkMethod::kDense;
  return Status::InvalidArgument("unknown linking method \"" + std::string(name) +
                                 "\": expected qafd | all | bm25 | dense");
}

std::string_view LinkMethodName(LinkMethod m) {
  switch (m) {
    case LinkMethod::kQafd: return "qafd";
    case LinkMethod::kAll: return "all";
    case LinkMethod::kBm25: return "bm25";
    case LinkMethod::kDense: return "dense";
  }
  return "?";
}

Result<std::unique_ptr<SchemaLinker>> SchemaLinker::Create(std::shared_ptr<const SchemaGraph> graph,
                                                           ValueIndex values,
                                                           std::shared_ptr<Embedder> embedder,
                                                           ChatModel* chat) {
  std::unique_ptr<SchemaLinker> l(new SchemaLinker());
  const SchemaGraph& g = *graph;
  std::vector<std::string> names, texts;
  Bm25Index::Builder bm25;
  for (uint32_t v = 0; v < g.num_nodes(); ++v) {
    names.push_back(g.NodeNameText(v));
    texts.push_back(g.NodeText(v));
    bm25.Add(texts.back());
    l->name_words_.push_back(OwnNameWords(g, v));
  }
  if (embedder == nullptr) {
    IdfTable::Builder idf;
    for (const std::string& t : texts) idf.AddDocument(TokenHashes(t));
    embedder = std::make_shared<HashedEmbedder>(HashedEmbedderOptions{},
                                                std::make_shared<IdfTable>(std::move(idf).Build()));
  }
  l->graph_ = std::move(graph);
  l->values_ = std::move(values);
  l->embedder_ = std::move(embedder);
  l->chat_ = chat;
  l->bm25_ = std::move(bm25).Build();
  FLOWRAG_ASSIGN_OR_RETURN(l->name_vectors_, l->EmbedAll(names));
  FLOWRAG_ASSIGN_OR_RETURN(l->text_vectors_, l->EmbedAll(texts));
  return l;
}

Result<FloatMatrix> SchemaLinker::EmbedAll(const std::vector<std::string>& texts) const {
  FloatMatrix out(texts.size(), 0);
  constexpr size_t kBatch = 256;
  for (size_t i = 0; i < texts.size(); i += kBatch) {
    const size_t n = std::min(kBatch, texts.size() - i);
    FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix part,
                             embedder_->Embed(std::span<const std::string>(texts.data() + i, n)));
    if (out.cols == 0) out = FloatMatrix(texts.size(), part.cols);
    if (part.cols != out.cols) return Status::Internal("embedder changed its dimension mid-batch");
    std::copy(part.data.begin(), part.data.end(), out.row(i));
  }
  return out;
}

Result<SchemaLink> SchemaLinker::Link(std::string_view question, LinkMethod method,
                                      const SchemaLinkOptions& o) const {
  const auto start = std::chrono::steady_clock::now();
  SchemaLink link;
  link.method = std::string(LinkMethodName(method));
  const SchemaGraph& g = *graph_;
  std::vector<std::pair<uint32_t, double>> ranked;
  switch (method) {
    case LinkMethod::kQafd:
      FLOWRAG_RETURN_IF_ERROR(LinkQafd(question, o, &link));
      break;
    case LinkMethod::kAll:
      for (uint32_t v = 0; v < g.num_nodes(); ++v) ranked.emplace_back(v, 1.0);
      LinkRanked(ranked, o, &link);
      break;
    case LinkMethod::kBm25:
      for (const Bm25Hit& h : bm25_.Search(question, o.top_columns > 0 ? g.num_nodes() : o.top_k, Bm25Params{})) {
        ranked.emplace_back(h.doc, h.score);
      }
      LinkRanked(TakeTop(std::move(ranked), o), o, &link);
      break;
    case LinkMethod::kDense: {
      FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix q, EmbedAll({std::string(question)}));
      for (uint32_t v = 0; v < g.num_nodes(); ++v) {
        ranked.emplace_back(v, DotProduct(q.row(0), text_vectors_.row(v), q.cols));
      }
      std::stable_sort(ranked.begin(), ranked.end(), [](auto& x, auto& y) { return x.second > y.second; });
      LinkRanked(TakeTop(std::move(ranked), o), o, &link);
      break;
    }
  }
  link.schema_text = SchemaText(link.tables, link.columns, link.joins, /*full_tables=*/false);
  link.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return link;
}

std::vector<std::pair<uint32_t, double>> SchemaLinker::TakeTop(std::vector<std::pair<uint32_t, double>> ranked,
                                                               const SchemaLinkOptions& o) const {
  if (o.top_columns == 0) {
    if (ranked.size() > o.top_k) ranked.resize(o.top_k);
    return ranked;
  }
  size_t columns = 0, keep = 0;
  while (keep < ranked.size() && columns < o.top_columns) {
    columns += graph_->Kind(ranked[keep++].first) == SchemaNodeKind::kColumn;
  }
  ranked.resize(keep);
  return ranked;
}

void SchemaLinker::LinkRanked(const std::vector<std::pair<uint32_t, double>>& ranked,
                              const SchemaLinkOptions&, SchemaLink* link) const {
  const SchemaGraph& g = *graph_;
  std::map<uint32_t, double> tables;
  for (auto [v, score] : ranked) {
    const uint32_t t = g.TableOf(v);
    if (!tables.count(t)) tables[t] = score;
    if (g.Kind(v) == SchemaNodeKind::kColumn) link->columns.push_back({g.NodeName(v), score, "rank"});
  }
  for (auto [t, score] : tables) link->tables.push_back({g.tables[t].name, score, "rank"});
  std::stable_sort(link->tables.begin(), link->tables.end(),
                   [](const LinkedItem& a, const LinkedItem& b) { return a.score > b.score; });
}

Result<std::vector<SchemaLinker::Subquery>> SchemaLinker::PlanOffline(std::string_view question,
                                                                      const SchemaLinkOptions& o,
                                                                      SchemaLink* link) const {
  const SchemaGraph& g = *graph_;
  std::vector<std::string> pieces =
      o.subqueries ? DecomposeQuery(question) : std::vector<std::string>{std::string(question)};
  const std::vector<ColumnValueMatch> values = values_.Find(question);
  std::vector<Subquery> plan;
  for (const std::string& piece : pieces) {
    Subquery sq;
    sq.text = piece;
    std::vector<std::string> keywords = ExtractKeywords(piece, nullptr).keywords;
    std::vector<double> score(g.num_nodes(), 0.0), lexical(g.num_nodes(), 0.0);
    if (!keywords.empty()) {
      FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix kv, EmbedAll(keywords));
      for (uint32_t v = 0; v < g.num_nodes(); ++v) {
        double best = 0.0;
        for (size_t k = 0; k < keywords.size(); ++k) {
          best = std::max<double>(best, DotProduct(kv.row(k), name_vectors_.row(v), kv.cols));
        }
        score[v] = best;
      }
      for (const std::string& kw : keywords) {  // word overlap with the node's own name
        std::vector<std::string> words = Tokenize(kw);
        std::sort(words.begin(), words.end());
        words.erase(std::unique(words.begin(), words.end()), words.end());
        if (words.empty()) continue;
        for (uint32_t v = 0; v < g.num_nodes(); ++v) {
          const auto& own = name_words_[v];
          size_t shared = 0;
          for (const std::string& w : words) shared += std::find(own.begin(), own.end(), w) != own.end();
          if (shared == 0) continue;
          const double jaccard = static_cast<double>(shared) /
                                 static_cast<double>(words.size() + own.size() - shared);
          lexical[v] = std::max(lexical[v], jaccard);
        }
      }
    }
    // A column the question names in a table it does not name is a weaker
    // match ("names of singers": singer.name over stadium.name).
    for (uint32_t v = 0; v < g.num_nodes(); ++v) {
      const double context =
          g.Kind(v) == SchemaNodeKind::kTable ? 1.0 : 0.4 + 0.6 * lexical[g.TableOf(v)];
      score[v] = std::max(score[v], lexical[v] * context);
    }
    for (double& x : score) {
      if (x < o.min_seed_score) x = 0.0;  // chance n-gram overlap is not a match
    }
    const std::string piece_key = EntityKey(piece);
    std::vector<uint32_t> valued;
    for (const ColumnValueMatch& m : values) {
      if (pieces.size() > 1 && piece_key.find(m.text) == std::string::npos) continue;
      const uint32_t v = g.ColumnNode(m.column);
      score[v] = std::max(score[v], o.value_score / std::sqrt(static_cast<double>(m.columns)));
      valued.push_back(v);
    }
    // Ties (a "name" column in every table) go to the node whose full text
    // is closest to the sub-query.
    FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix qv, EmbedAll({piece}));
    std::vector<std::pair<uint32_t, double>> order;
    for (uint32_t v = 0; v < g.num_nodes(); ++v) {
      if (score[v] <= 0.0) continue;
      order.emplace_back(v, score[v] + 0.1 * DotProduct(qv.row(0), text_vectors_.row(v), qv.cols));
    }
    std::stable_sort(order.begin(), order.end(), [](auto& x, auto& y) { return x.second > y.second; });
    for (auto [v, s] : order) {
      const bool value = std::find(valued.begin(), valued.end(), v) != valued.end();
      if (!value && (sq.candidates.size() >= o.seeds || s < o.seed_ratio * order.front().second)) continue;
      sq.candidates.emplace_back(v, std::min(1.0, s / order.front().second));  // values always stay
    }
    if (sq.candidates.empty()) continue;
    const uint32_t source = sq.candidates.front().first;
    for (size_t j = 1; j < sq.candidates.size(); ++j) {
      sq.pairs.push_back({source, sq.candidates[j].first, sq.candidates[j].second});
    }
    if (sq.pairs.empty()) sq.pairs.push_back({source, source, 1.0});
    plan.push_back(std::move(sq));
  }
  return plan;
}

void SchemaLinker::MergeValueMatches(const std::vector<ColumnValueMatch>& values, const SchemaLinkOptions& o,
                                     std::vector<Subquery>* plan) const {
  const SchemaGraph& g = *graph_;
  std::vector<std::string> keys;
  for (const Subquery& sq : *plan) keys.push_back(EntityKey(sq.text));
  for (const ColumnValueMatch& m : values) {
    const uint32_t v = g.ColumnNode(m.column);
    const double score = o.value_score / std::sqrt(static_cast<double>(std::max<size_t>(1, m.columns)));
    bool any = false;
    for (const std::string& k : keys) any = any || ContainsWords(k, m.text);
    for (size_t i = 0; i < plan->size(); ++i) {
      if (any && !ContainsWords(keys[i], m.text)) continue;
      Subquery& sq = (*plan)[i];
      auto c = std::find_if(sq.candidates.begin(), sq.candidates.end(), [&](auto& x) { return x.first == v; });
      if (c == sq.candidates.end()) sq.candidates.emplace_back(v, score);
      else c->second = std::max(c->second, score);
      const bool source = std::any_of(sq.pairs.begin(), sq.pairs.end(), [&](const Pair& p) { return p.source == v; });
      if (source) continue;
      // The value filters where the sub-query ends: its mass flows along the
      // path to the model's first target.
      const uint32_t target = sq.pairs.empty() ? v : sq.pairs.front().target;
      sq.pairs.push_back({v, target, score});
    }
  }
}

namespace {

// The edge weights of Eq. 5 and the similarity they are made of; alpha and
// capacity must be positive.
Status ParseEdgeOptions(const SchemaLinkOptions& o, EdgeWeighting* weighting,
                        SimilarityKind* similarity) {
  if (o.weights == "hybrid") {
    *weighting = EdgeWeighting::kHybrid;
  } else if (o.weights == "product") {
    *weighting = EdgeWeighting::kProduct;
  } else if (o.weights == "mean") {
    *weighting = EdgeWeighting::kMean;
  } else {
    return Status::InvalidArgument("link weights \"" + o.weights +
                                   "\": expected mean | product | hybrid");
  }
  if (o.similarity == "rbf") {
    *similarity = SimilarityKind::kRbf;
  } else if (o.similarity == "cosine") {
    *similarity = SimilarityKind::kCosine;
  } else {
    return Status::InvalidArgument("link similarity \"" + o.similarity +
                                   "\": expected cosine | rbf");
  }
  if (!(o.alpha > 0.0) || !(o.capacity > 0.0)) {
    return Status::InvalidArgument("link alpha and capacity must be > 0 (alpha " +
                                   std::to_string(o.alpha) + ", capacity " +
                                   std::to_string(o.capacity) + ")");
  }
  return Status::Ok();
}

}  // namespace

// The state of one LinkQafd call: its options, parsed, and what the
// sub-queries' diffusions found so far, per schema node.
struct SchemaLinker::QafdFlow {
  EdgeWeighting weighting;
  SimilarityKind similarity;
  FlowDiffusionOptions fo;
  bool degree_sinks = false;
  bool support_mode = false;  // relevance = "support": the flow confirms candidates only
  double total_capacity = 0.0;
  std::vector<double> relevance, seed_score;
  std::vector<std::string> why;
  std::vector<bool> candidate;  // of the current sub-query
  bool flowed = false;          // some sub-query's diffusion pushed

  // The sink capacity T_v of node v.
  double Sink(const SchemaGraph& g, uint32_t v) const {
    return degree_sinks ? std::max<double>(1.0, static_cast<double>(g.Degree(v))) * fo.beta
                        : fo.beta;
  }

  // Sinks, mass and relevance (checked after planning: a question the
  // schema does not match is not an error whatever they say).
  Status Init(const SchemaGraph& g, const SchemaLinkOptions& o) {
    fo.alpha = o.alpha;
    degree_sinks = o.sinks == "degree";
    if (!degree_sinks && o.sinks != "uniform") {
      return Status::InvalidArgument("link sinks \"" + o.sinks + "\": expected uniform | degree");
    }
    if (o.mass != "score" && o.mass != "path") {
      return Status::InvalidArgument("link mass \"" + o.mass + "\": expected score | path");
    }
    support_mode = o.relevance == "support";
    if (!support_mode && o.relevance != "max") {
      return Status::InvalidArgument("link relevance \"" + o.relevance +
                                     "\": expected support | max");
    }
    fo.capacity = degree_sinks ? CapacityKind::kDegree : CapacityKind::kUniform;
    fo.beta = o.capacity;
    fo.epsilon = o.epsilon;
    fo.max_pushes = o.max_pushes;
    for (uint32_t v = 0; v < g.num_nodes(); ++v) total_capacity += Sink(g, v);
    relevance.assign(g.num_nodes(), 0.0);
    seed_score.assign(g.num_nodes(), 0.0);
    why.assign(g.num_nodes(), "");
    candidate.assign(g.num_nodes(), false);
    return Status::Ok();
  }
};

Result<std::vector<SchemaLinker::Subquery>> SchemaLinker::PlanSubqueries(
    std::string_view question, const SchemaLinkOptions& o,
    const std::vector<ColumnValueMatch>& values, SchemaLink* link) const {
  std::vector<Subquery> plan;
  if (o.llm && chat_ != nullptr) {
    Result<std::vector<Subquery>> planned = Status::Internal("planner answer");
    try {
      planned = PlanWithLlm(question, o, link);
    } catch (const std::exception& e) {  // a JSON value of an unexpected type
      planned = Status::InvalidArgument(std::string("malformed planner answer: ") + e.what());
    }
    if (planned.ok() && !planned->empty()) {
      plan = std::move(planned).value();
      MergeValueMatches(values, o, &plan);
    } else {
      link->warnings.push_back("LLM seed selection failed (" +
                               (planned.ok() ? std::string("no node it named is in the schema")
                                             : planned.status().message()) +
                               "); used the offline plan");
    }
  }
  if (plan.empty()) {
    FLOWRAG_ASSIGN_OR_RETURN(plan, PlanOffline(question, o, link));
  }
  return plan;
}

Status SchemaLinker::DiffuseSubquery(const Subquery& sq, const SchemaLinkOptions& o, QafdFlow* flow,
                                     SchemaLink* link) const {
  const SchemaGraph& g = *graph_;
  link->subqueries.push_back(sq.text);
  std::fill(flow->candidate.begin(), flow->candidate.end(), false);
  for (auto [v, s] : sq.candidates) {
    flow->candidate[v] = true;
    flow->seed_score[v] = std::max(flow->seed_score[v], s);
    if (!flow->support_mode && s > flow->relevance[v]) {
      flow->relevance[v] = s;
      flow->why[v] = flow->why[v].empty() ? "keyword" : flow->why[v];
    }
  }
  std::map<uint32_t, double> mass;  // source → Δ
  if (o.mass == "score") {          // every candidate: α·T_v·score
    for (auto [v, s] : sq.candidates) mass[v] += o.alpha * flow->Sink(g, v) * s;
  } else {  // A2.2.1: Σ over pairs of confidence · α·Σ_{j∈P} T_j
    for (const Pair& p : sq.pairs) {
      const std::vector<uint32_t> path = g.ShortestPath(p.source, p.target);
      double on_path = 0.0;
      for (uint32_t v : path) on_path += flow->Sink(g, v);
      mass[p.source] += p.confidence * (path.empty() ? flow->total_capacity : o.alpha * on_path);
    }
  }
  std::vector<FlowSource> sources;  // Δ_v = α·T_v·scale
  for (auto [v, m] : mass) sources.push_back({v, m / (o.alpha * flow->Sink(g, v))});
  FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix qv, EmbedAll({sq.text}));
  SchemaDiffusionGraph dg(g, text_vectors_, qv.row(0), o, flow->weighting, flow->similarity);
  FLOWRAG_ASSIGN_OR_RETURN(const FlowDiffusionResult r, SolveFlowDiffusion(dg, sources, flow->fo));
  for (auto [v, m] : mass) {
    const ptrdiff_t at = r.Find(v);
    link->sources.push_back(
        {g.NodeName(v), link->subqueries.size() - 1, m, at < 0 ? 0.0 : r.source[at]});
  }
  link->scaled_sources += r.scaled_sources;
  link->pushes += r.pushes;
  link->nodes_touched += r.nodes.size();
  double max_x = 0.0;
  for (double x : r.x) max_x = std::max(max_x, x);
  if (max_x <= 0.0) return Status::Ok();
  flow->flowed = true;
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    const uint32_t v = r.nodes[i];
    if (flow->support_mode && !flow->candidate[v]) continue;  // the flow confirms, it adds none
    const double rel = r.x[i] / max_x;
    if (rel > flow->relevance[v]) {
      flow->relevance[v] = rel;
      if (flow->why[v].empty()) flow->why[v] = flow->support_mode ? "keyword" : "flow";
    }
  }
  return Status::Ok();
}

void SchemaLinker::SelectLinked(const SchemaLinkOptions& o,
                                const std::vector<ColumnValueMatch>& values, QafdFlow* flow,
                                SchemaLink* link) const {
  const SchemaGraph& g = *graph_;
  std::vector<double>& relevance = flow->relevance;
  std::vector<std::string>& why = flow->why;
  if (flow->support_mode) {
    // Without any push (max_pushes = 0, or no candidate above its sink) the
    // seeds are the answer. Value matches stay linked, and table candidates
    // keep their keyword score: x_v is the excess v pushed over its weighted
    // degree, so a table node (one edge per column) has a small x however
    // much flow passes through it.
    for (uint32_t v = 0; v < g.num_nodes(); ++v) {
      if (flow->seed_score[v] <= 0.0) continue;
      if (!flow->flowed || g.Kind(v) == SchemaNodeKind::kTable) {
        relevance[v] = std::max(relevance[v], flow->seed_score[v]);
      }
      if (why[v].empty()) why[v] = "keyword";
    }
    for (const ColumnValueMatch& m : values) {
      const uint32_t v = g.ColumnNode(m.column);
      relevance[v] = std::max(relevance[v], flow->seed_score[v]);
    }
  }
  // Value-matched columns say so.
  for (const ColumnValueMatch& m : values) {
    const uint32_t v = g.ColumnNode(m.column);
    if (relevance[v] >= o.select) why[v] = "value";
  }
  // Selection: columns by relevance; a selected table node selects its table.
  std::vector<double> table_rel(g.tables.size(), 0.0);
  for (uint32_t v = 0; v < g.num_nodes(); ++v) {
    if (relevance[v] <= 0.0 || relevance[v] < o.select) continue;
    const uint32_t t = g.TableOf(v);
    table_rel[t] = std::max(table_rel[t], relevance[v]);
    if (g.Kind(v) == SchemaNodeKind::kColumn) {
      link->columns.push_back({g.NodeName(v), relevance[v], why[v]});
    }
  }
  for (uint32_t t = 0; t < g.tables.size(); ++t) {
    if (table_rel[t] <= 0.0) continue;
    // A table linked through its columns: by the flow only when the flow
    // may add nodes (relevance = "max").
    link->tables.push_back({g.tables[t].name, table_rel[t],
                            !why[t].empty()      ? why[t]
                            : flow->support_mode ? "keyword"
                                                 : "flow"});
  }
  auto by_score = [](const LinkedItem& a, const LinkedItem& b) { return a.score > b.score; };
  std::stable_sort(link->tables.begin(), link->tables.end(), by_score);
  if (o.joins) AddJoins(&relevance, &why, link);
  std::stable_sort(link->columns.begin(), link->columns.end(), by_score);
}

Status SchemaLinker::LinkQafd(std::string_view question, const SchemaLinkOptions& o,
                              SchemaLink* link) const {
  const SchemaGraph& g = *graph_;
  QafdFlow flow;
  FLOWRAG_RETURN_IF_ERROR(ParseEdgeOptions(o, &flow.weighting, &flow.similarity));
  const std::vector<ColumnValueMatch> values = values_.Find(question);
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<Subquery> plan, PlanSubqueries(question, o, values, link));
  for (const ColumnValueMatch& m : values) {
    link->value_matches.push_back(m.text + " → " + g.NodeName(g.ColumnNode(m.column)));
  }
  if (plan.empty()) {
    link->warnings.push_back("no table, column or value of the schema matches the question");
    return Status::Ok();
  }
  FLOWRAG_RETURN_IF_ERROR(flow.Init(g, o));
  for (const Subquery& sq : plan) FLOWRAG_RETURN_IF_ERROR(DiffuseSubquery(sq, o, &flow, link));
  SelectLinked(o, values, &flow, link);
  return Status::Ok();
}

void SchemaLinker::AddJoins(std::vector<double>* relevance, std::vector<std::string>* why,
                            SchemaLink* link) const {
  const SchemaGraph& g = *graph_;
  if (link->tables.size() < 2) return;
  std::vector<uint32_t> connected{static_cast<uint32_t>(g.FindTable(link->tables[0].name))};
  std::vector<uint32_t> pending;
  for (size_t i = 1; i < link->tables.size(); ++i) pending.push_back(static_cast<uint32_t>(g.FindTable(link->tables[i].name)));
  auto has_table = [&](uint32_t t) {
    return std::any_of(link->tables.begin(), link->tables.end(),
                       [&](const LinkedItem& x) { return x.name == g.tables[t].name; });
  };
  auto has_column = [&](const std::string& name) {
    return std::any_of(link->columns.begin(), link->columns.end(),
                       [&](const LinkedItem& x) { return x.name == name; });
  };
  while (!pending.empty()) {
    std::vector<uint32_t> best;
    size_t best_i = 0;
    for (size_t i = 0; i < pending.size(); ++i) {
      for (uint32_t c : connected) {
        std::vector<uint32_t> path = g.ShortestPath(c, pending[i]);
        if (!path.empty() && (best.empty() || path.size() < best.size())) {
          best = std::move(path);
          best_i = i;
        }
      }
    }
    if (best.empty()) {
      for (uint32_t t : pending) link->warnings.push_back("no join path reaches table " + g.tables[t].name);
      return;
    }
    for (size_t k = 0; k < best.size(); ++k) {
      const uint32_t v = best[k];
      const uint32_t t = g.TableOf(v);
      if (!has_table(t)) link->tables.push_back({g.tables[t].name, 0.0, "join"});
      if (std::find(connected.begin(), connected.end(), t) == connected.end()) connected.push_back(t);
      if (g.Kind(v) != SchemaNodeKind::kColumn) continue;
      const std::string name = g.NodeName(v);
      if (!has_column(name)) {
        link->columns.push_back({name, (*relevance)[v], "join"});
        (*why)[v] = "join";
      }
      if (k + 1 < best.size() && g.Kind(best[k + 1]) == SchemaNodeKind::kColumn) {
        const uint32_t a = g.ColumnOf(v), b = g.ColumnOf(best[k + 1]);
        bool inferred = false;
        for (const SchemaForeignKey& fk : g.foreign_keys) {
          if ((fk.from == a && fk.to == b) || (fk.from == b && fk.to == a)) inferred = fk.inferred;
        }
        link->joins.push_back({name, g.NodeName(best[k + 1]), inferred});
      }
    }
    pending.erase(pending.begin() + static_cast<ptrdiff_t>(best_i));
  }
}

std::string SchemaLinker::SchemaText(const std::vector<LinkedItem>& tables,
                                     const std::vector<LinkedItem>& columns,
                                     const std::vector<JoinEdge>& joins, bool full_tables) const {
  const SchemaGraph& g = *graph_;
  std::unordered_set<std::string> linked_columns;
  for (const LinkedItem& c : columns) linked_columns.insert(c.name);
  std::string out;
  for (const LinkedItem& t : tables) {
    const int64_t ti = g.FindTable(t.name);
    if (ti < 0) continue;
    out += g.tables[ti].name + "(";
    bool first = true;
    for (uint32_t c : g.tables[ti].columns) {
      const SchemaColumn& col = g.columns[c];
      const std::string name = g.tables[ti].name + "." + col.name;
      if (!linked_columns.count(name) && !full_tables && !col.primary_key) continue;
      out += (first ? "" : ", ") + col.name + (col.type.empty() ? "" : " " + col.type);
      if (col.primary_key) out += " PK";
      if (!col.samples.empty()) {
        out += " e.g.";
        for (size_t i = 0; i < col.samples.size() && i < 3; ++i) out += (i ? ", '" : " '") + col.samples[i] + "'";
      }
      if (!col.description.empty()) out += " -- " + col.description;
      first = false;
    }
    out += ")\n";
  }
  if (!joins.empty()) {
    out += "Joins:\n";
    for (const JoinEdge& j : joins) out += "  " + j.from + " = " + j.to + (j.inferred ? " (same name)" : "") + "\n";
  }
  return out;
}

}  // namespace flowrag
