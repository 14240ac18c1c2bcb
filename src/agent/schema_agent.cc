// RunSchemaAgent (agent/schema_agent.h).
#include "agent/schema_agent.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>

#include "agent/tool_plan.h"
#include "common/text.h"
#include "schema/query_extension.h"

namespace flowrag {
namespace {

struct Lookup {
  std::string type, field;        // the return field ("" → the records' names)
  std::vector<uint32_t> records;  // the records satisfying the most constraints
  std::vector<std::string> values;
  std::vector<std::string> constraints;  // "field = value"
  double c_node = 1.0;
};

// SchemaLookup (D.1): the entity type whose records satisfy the most
// constraints, those records, and the field the question asks for.
Lookup SchemaLookup(std::string_view question, const QuestionAnalysis& a, const SchemaIndex& index) {
  struct Hit {
    std::set<std::string> fields;
    std::vector<std::string> constraints;
    double min_score = 1.0;
  };
  std::map<std::string, std::map<uint32_t, Hit>> by_type;
  for (const ValueMatch& c : a.constraints) {
    for (uint32_t r : c.records) {
      Hit& h = by_type[c.type][r];
      if (!h.fields.insert(c.field).second) continue;
      h.constraints.push_back(c.field + " = " + c.value);
      h.min_score = std::min(h.min_score, c.score);
    }
  }
  auto asks_field = [&](const std::string& type, const std::set<std::string>& used) -> std::string {
    for (const FieldMention& f : a.fields) {
      if (f.type == type && !used.count(f.field)) return f.field;
    }
    return "";
  };
  Lookup best;
  size_t best_count = 0;
  bool best_has_field = false;
  for (const auto& [type, hits] : by_type) {
    size_t most = 0;
    for (const auto& [r, h] : hits) most = std::max(most, h.fields.size());
    std::vector<uint32_t> records;
    std::set<std::string> used;
    for (const auto& [r, h] : hits) {
      if (h.fields.size() != most) continue;
      records.push_back(r);
      used.insert(h.fields.begin(), h.fields.end());
    }
    const std::string field = asks_field(type, used);
    const bool has_field = !field.empty();
    if (most < best_count || (most == best_count && (best_has_field || !has_field))) continue;
    best = Lookup{type, field, records, {}, hits.at(records[0]).constraints, 1.0};
    for (uint32_t r : records) best.c_node = std::min(best.c_node, hits.at(r).min_score);
    best_count = most;
    best_has_field = has_field;
  }
  if (best.records.empty()) return best;
  const std::string q = ToLowerAscii(question);
  const bool asks_name = q.rfind("which", 0) == 0 || q.rfind("who", 0) == 0 ||
                         q.rfind("what is the name", 0) == 0 || q.rfind("name", 0) == 0;
  std::set<std::string> seen;
  for (uint32_t r : best.records) {
    const IndexedRecord& rec = index.records()[r];
    std::string v;
    if (!best.field.empty()) {
      for (const auto& [f, value] : rec.fields) {
        if (f == best.field) v = value;
      }
    } else if (asks_name) {
      v = rec.name;
    }
    if (!v.empty() && seen.insert(v).second) best.values.push_back(v);
  }
  return best;
}

// True when `field`'s name is what the question asks for: one of its words
// within the first three content words after the question word.
bool AsksForField(std::string_view question, const std::string& field) {
  static const std::set<std::string> kQuestionWords = {"what", "which", "who", "whom", "whose",
                                                       "where", "when", "how"};
  TokenizerOptions o;
  o.stem = false;
  const std::vector<std::string> q = Tokenize(question, TokenizerOptions{false, false});
  size_t start = 0;
  while (start < q.size() && !kQuestionWords.count(q[start])) ++start;
  if (start == q.size()) return true;  // not a wh-question: no focus to compare
  std::set<std::string> focus;
  for (size_t i = start + 1, taken = 0; i < q.size() && taken < 3; ++i) {
    if (IsStopword(q[i])) continue;
    focus.insert(StemS(q[i]));
    ++taken;
  }
  for (const std::string& t : Tokenize(field, o)) {
    if (focus.count(StemS(t))) return true;
  }
  return false;
}

// Stage 2: how well the passages an answer cites support it.
double PassageGrounding(const Answer& a) {
  if (!a.answered || a.text.empty()) return 0.0;
  const std::string answer = ToLowerAscii(a.text);
  const std::vector<std::string> words = Tokenize(a.text);
  double best = 0.0;
  for (const Citation& c : a.citations) {
    for (const ScoredPassage& p : a.retrieval.passages) {
      if (p.passage_id != c.passage_id) continue;
      const std::string text = ToLowerAscii(p.title + "\n" + p.text);
      if (text.find(answer) != std::string::npos) return 0.9;
      if (words.empty()) continue;
      const std::vector<std::string> in = Tokenize(text);
      const std::set<std::string> have(in.begin(), in.end());
      size_t hit = 0;
      for (const std::string& w : words) hit += have.count(w);
      if (2 * hit >= words.size()) best = 0.7;
    }
  }
  return best;
}

void AddUsage(const TokenUsage& u, TokenUsage* total) {
  total->llm_calls += u.llm_calls;
  total->cache_hits += u.cache_hits;
  total->prompt_tokens += u.prompt_tokens;
  total->completion_tokens += u.completion_tokens;
  total->cost_usd += u.cost_usd;
}

class Agent {
 public:
  Agent(std::string_view question, const AnswerOptions& options, const SchemaAgentDeps& deps)
      : question_(question), options_(options), deps_(deps), snap_(*deps.snapshot) {}

  Result<Answer> Run() {
    const auto start = std::chrono::steady_clock::now();
    out_.question = std::string(question_);
    out_.pipeline = "schema";
    out_.answerer = "schema";
    analysis_ = deps_.index->AnalyzeQuestion(question_, snap_);
    if (!analysis_.missing_concept.empty()) {
      // C.2: the schema has no type or field for what is asked; the answer can
      // only come from text (the store has no records of it).
      out_.warnings.push_back("schema sufficiency: no entity type or field for \"" +
                              analysis_.missing_concept + "\"");
    }
    FLOWRAG_RETURN_IF_ERROR(ExtendForThisQuestion());
    FLOWRAG_RETURN_IF_ERROR(PlanWithModel());
    const std::string ood = OutOfScope();
    if (!ood.empty()) {
      Abstain("out of scope: " + ood + " (no external search is configured)");
    } else {
      FLOWRAG_RETURN_IF_ERROR(Rounds());
    }
    out_.time_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return std::move(out_);
  }

 private:
  // The chat model the query analysis may use (null: offline).
  Result<ChatModel*> AnalysisChat() const {
    ChatModel* chat = deps_.pipeline.chat;
    const std::string& mode = options_.schema.analysis;
    if (mode == "offline" || (mode == "auto" && chat == nullptr)) return nullptr;
    if (chat == nullptr) {
      return Status::FailedPrecondition("schema.analysis \"llm\": no chat model is configured");
    }
    return chat;
  }

  // C.6 with a chat model, when the sufficiency check found a gap: the E.3
  // proposal merged into a copy of the contract that the E.4 plan reads,
  // dropped with this Agent. A step records it; a failed call only warns.
  Status ExtendForThisQuestion() {
    if (options_.schema.extension == "off" || analysis_.missing_concept.empty()) return Status::Ok();
    FLOWRAG_ASSIGN_OR_RETURN(ChatModel * chat, AnalysisChat());
    if (chat == nullptr) return Status::Ok();
    UsageChat counted(chat, deps_.pipeline.prices);
    Result<QueryExtension> ext = ExtendForQuery(question_, deps_.index->contract(), counted,
                                                options_.schema.extension_min_confidence);
    AddUsage(counted.tokens(), &out_.usage);
    if (!ext.ok()) {
      out_.warnings.push_back("query-scoped schema extension failed (" + ext.status().message() + ")");
      return Status::Ok();
    }
    AnswerStep step;
    step.query = "ExtendSchema(" + analysis_.missing_concept + ")";
    for (const std::string& a : ext->added) step.answer += (step.answer.empty() ? "" : "; ") + a;
    step.summary = "query-scoped extension: " + std::to_string(ext->added.size()) +
                   " added for this question only";
    for (size_t i = 0; i < ext->rejected.size(); ++i) {
      step.summary += (i == 0 ? "; left out: " : "; ") + ext->rejected[i];
    }
    if (!ext->added.empty()) {
      scoped_ = std::move(ext->contract);
      out_.warnings.back() += "; the schema was extended for this question (" + step.answer + ")";
      if (!options_.schema.extension_snapshots.empty()) {
        Result<std::string> saved = SaveExtensionSnapshot(*scoped_, options_.schema.extension_snapshots);
        if (saved.ok()) {
          step.summary += "; snapshot " + *saved;
        } else {
          out_.warnings.push_back("extension snapshot not saved: " + saved.status().message());
        }
      }
    }
    out_.steps.push_back(std::move(step));
    return Status::Ok();
  }

  // D.2/D.4 with a chat model: the E.4 plan, merged into the offline
  // analysis (its constraints and return fields first). A failed call or an
  // unreadable answer leaves the offline analysis, with a warning.
  Status PlanWithModel() {
    FLOWRAG_ASSIGN_OR_RETURN(ChatModel * chat, AnalysisChat());
    if (chat == nullptr) return Status::Ok();
    UsageChat counted(chat, deps_.pipeline.prices);
    Result<ToolPlan> plan =
        PlanTools(question_, *deps_.index, counted, scoped_ ? &*scoped_ : nullptr);
    AddUsage(counted.tokens(), &out_.usage);
    if (!plan.ok()) {
      out_.warnings.push_back("query analysis by the model failed (" + plan.status().message() +
                              "); the offline analysis is used");
      return Status::Ok();
    }
    plan_ = std::move(*plan);
    std::vector<ValueMatch> constraints = plan_.constraints;
    for (ValueMatch& m : analysis_.constraints) {
      const bool dup = std::any_of(constraints.begin(), constraints.end(), [&](const ValueMatch& c) {
        return c.type == m.type && c.field == m.field && c.value == m.value;
      });
      if (!dup) constraints.push_back(std::move(m));
    }
    analysis_.constraints = std::move(constraints);
    analysis_.fields.insert(analysis_.fields.begin(), plan_.fields.begin(), plan_.fields.end());
    for (int y : plan_.years) {
      if (std::find(analysis_.years.begin(), analysis_.years.end(), y) == analysis_.years.end()) {
        analysis_.years.push_back(y);
      }
    }
    if (plan_.dropped > 0) {
      out_.warnings.push_back(std::to_string(plan_.dropped) +
                              " name(s) or value(s) proposed by the model are not in the schema or the "
                              "sources; dropped");
    }
    AnswerStep step;
    step.query = "Plan(" + std::string(question_) + ")";
    for (const std::string& t : plan_.tools) step.answer += (step.answer.empty() ? "" : " -> ") + t;
    if (plan_.out_of_scope) step.answer += (step.answer.empty() ? "" : " -> ") + std::string("ExternalSearch");
    step.summary = "query analysis by the model: " + std::to_string(plan_.constraints.size()) +
                   " constraints, " + std::to_string(plan_.fields.size()) + " return fields";
    out_.steps.push_back(std::move(step));
    return Status::Ok();
  }

  // D.3 stage 1.
  std::string OutOfScope() const {
    if (!options_.schema.ood_gate) return "";
    if (plan_.out_of_scope) return "the model: " + plan_.reason;
    if (analysis_.realtime) return "the question asks for real-time information";
    const SchemaIndex& index = *deps_.index;
    for (int y : analysis_.years) {
      if (index.min_year() > 0 && (y < index.min_year() || y > index.max_year())) {
        return "year " + std::to_string(y) + " is outside the data (" +
               std::to_string(index.min_year()) + "-" + std::to_string(index.max_year()) + ")";
      }
    }
    if (!analysis_.unknown_mentions.empty()) {
      return "\"" + analysis_.unknown_mentions[0] + "\" is not known to the schema or the sources";
    }
    return "";
  }

  void Abstain(const std::string& why) {
    out_.answered = false;
    out_.text = "Insufficient Information";
    out_.reasoning = why;
    out_.confidence = 0.0;
  }

  Status Rounds() {
    // The model's order first (when it planned), then the preference order.
    std::vector<std::string> plan;
    auto add = [&](const std::string& tool) {
      if (tool == "SchemaLookup" && analysis_.constraints.empty()) return;
      if (std::find(plan.begin(), plan.end(), tool) == plan.end()) plan.push_back(tool);
    };
    for (const std::string& tool : plan_.tools) add(tool);
    for (const char* tool : {"SchemaLookup", "VectorRAG", "GraphTraverse"}) add(tool);
    std::string failure;
    const size_t rounds = std::min(plan.size(), options_.schema.max_retries + 1);
    for (size_t r = 0; r < rounds; ++r) {
      const double c_link = r == 0 ? 1.0 : options_.schema.retry_link;
      Result<bool> done = plan[r] == "SchemaLookup" ? RunLookup(c_link) : RunPassages(plan[r], c_link);
      FLOWRAG_RETURN_IF_ERROR(done.status());
      if (*done) return Status::Ok();
      failure += (failure.empty() ? "" : "; ") + out_.steps.back().summary;
      if (r + 1 < rounds) out_.steps.back().summary += "; next: " + plan[r + 1];
    }
    Abstain("no grounded answer: " + failure);
    return Status::Ok();
  }

  double NodeConfidence() const {
    double c = 1.0;
    for (const ValueMatch& m : analysis_.constraints) c = std::min(c, m.score);
    return c;
  }

  Result<bool> RunLookup(double c_link) {
    lookup_ = SchemaLookup(question_, analysis_, *deps_.index);
    AnswerStep step;
    std::string call = "SchemaLookup(" + lookup_.type + ":";
    for (const std::string& c : lookup_.constraints) call += " " + c;
    call += " -> " + (lookup_.field.empty() ? std::string("name") : lookup_.field) + ")";
    step.query = call;
    for (uint32_t r : lookup_.records) {
      step.passage_ids.push_back(snap_.passage(deps_.index->records()[r].passage).id);
    }
    for (const std::string& v : lookup_.values) step.answer += (step.answer.empty() ? "" : "; ") + v;
    step.summary = lookup_.values.empty()
                       ? "SchemaLookup: " + std::to_string(lookup_.records.size()) +
                             " records matched, no value for the asked field"
                       : "SchemaLookup: " + std::to_string(lookup_.records.size()) + " records, " +
                             std::to_string(lookup_.values.size()) + " values";
    out_.steps.push_back(std::move(step));
    if (lookup_.values.empty()) return false;
    FLOWRAG_ASSIGN_OR_RETURN(bool hopped, RunLinkHop(c_link));
    if (hopped) return true;

    // Evidence: the matched records, each cited with its "field: value" line.
    RetrievalResult evidence;
    evidence.method = "schema-lookup";
    for (uint32_t r : lookup_.records) {
      evidence.passages.push_back(snap_.Scored(deps_.index->records()[r].passage, lookup_.c_node));
    }
    const bool list = analysis_.answer_type == "list";
    std::string text = lookup_.values[0];
    if (list) {
      for (size_t i = 1; i < lookup_.values.size(); ++i) text += ", " + lookup_.values[i];
    }
    // Ambiguity: several records disagree on a single answer.
    const double agreement = list ? 1.0 : 1.0 / static_cast<double>(lookup_.values.size());
    if (deps_.pipeline.chat != nullptr && options_.answerer != "extractive") {
      return Synthesize(evidence, c_link, agreement);
    }
    out_.text = text;
    out_.answered = true;
    out_.answerer = "schema-lookup";
    out_.reasoning = "SchemaLookup on " + lookup_.type + " → " +
                     (lookup_.field.empty() ? std::string("name") : lookup_.field) +
                     (agreement < 1.0 ? " (" + std::to_string(lookup_.values.size()) +
                                            " records disagree; the first is given)"
                                      : "");
    int marker = 1;
    for (size_t i = 0; i < evidence.passages.size(); ++i) {
      const IndexedRecord& rec = deps_.index->records()[lookup_.records[i]];
      const ScoredPassage& p = evidence.passages[i];
      std::string value;
      for (const auto& [f, v] : rec.fields) {
        if (f == lookup_.field) value = v;
      }
      if (!list && (lookup_.field.empty() ? rec.name : value) != lookup_.values[0]) continue;
      Citation c;
      c.marker = marker++;
      c.passage_id = p.passage_id;
      c.document_id = p.document_id;
      c.title = p.title;
      const std::string line = lookup_.field.empty() ? "" : lookup_.field + ": " + value;
      const std::string& doc = snap_.document_of(deps_.index->records()[lookup_.records[i]].passage).text;
      const size_t at = line.empty() ? std::string::npos : doc.find("\n" + line);
      if (at != std::string::npos) {
        c.quote = line;
        c.begin = static_cast<uint32_t>(at + 1);
        c.end = static_cast<uint32_t>(at + 1 + line.size());
      } else {
        c.quote = p.text.substr(0, p.text.find('\n'));
        c.begin = p.begin;
        c.end = static_cast<uint32_t>(p.begin + c.quote.size());
      }
      out_.citations.push_back(std::move(c));
    }
    out_.confidence = c_link * lookup_.c_node * 1.0 * agreement;
    out_.retrieval = std::move(evidence);
    return true;
  }

  // GraphTraverse along link fields (D.1): when the looked-up values name
  // text documents (a table cell linking to its page) and the question does
  // not ask for the looked-up field itself, the value is a bridge and the
  // question is answered from those documents (unless that answer is the
  // value again).
  Result<bool> RunLinkHop(double c_link) {
    RetrievalResult linked;
    linked.method = "link";
    for (size_t i = 0; i < lookup_.values.size() && i < 3; ++i) {
      for (uint32_t p : deps_.index->LinkedPassages(lookup_.values[i])) {
        linked.passages.push_back(snap_.Scored(p, 1.0));
      }
    }
    if (linked.passages.empty() || lookup_.field.empty()) return false;
    // The value answers the question when the question asks for that field
    // (its name right after the wh-word: "Which team ...", "Who is the
    // coach ..."); otherwise it is a bridge ("the capital of the state
    // that hosted X": the state is looked up, the capital is on its page),
    // and the hop's answer is taken whenever it is grounded.
    if (AsksForField(question_, lookup_.field) || PlanReturns(lookup_.type, lookup_.field)) return false;
    PipelineDeps pd = deps_.pipeline;
    pd.retrieve = [&](std::string_view, ChatModel*) -> Result<RetrievalResult> { return linked; };
    AnswerOptions ao = options_;
    ao.pipeline = "single";
    FLOWRAG_ASSIGN_OR_RETURN(Answer a, RunAnswerPipeline(question_, ao, pd));
    const bool is_value = std::any_of(lookup_.values.begin(), lookup_.values.end(),
                                      [&](const std::string& v) { return EntityKey(v) == EntityKey(a.text); });
    if (!a.answered || is_value) {
      AnswerStep step;
      step.query = "GraphTraverse(link: " + lookup_.values[0] + ")";
      step.answer = a.answered ? a.text : "";
      for (const ScoredPassage& p : linked.passages) step.passage_ids.push_back(p.passage_id);
      step.summary = "GraphTraverse: no answer in the linked documents; the looked-up value stands";
      out_.steps.push_back(std::move(step));
      return false;
    }
    const double ground = PassageGrounding(a);
    return Accept(std::move(a), "GraphTraverse(link: " + lookup_.values[0] + ")",
                  c_link * options_.schema.retry_link * lookup_.c_node, ground, false);
  }

  // The model's plan names `type`.`field` as what the lookup returns and
  // does not go on to GraphTraverse: the value is the answer, not a bridge.
  bool PlanReturns(const std::string& type, const std::string& field) const {
    if (std::find(plan_.tools.begin(), plan_.tools.end(), "GraphTraverse") != plan_.tools.end()) return false;
    return std::any_of(plan_.fields.begin(), plan_.fields.end(),
                       [&](const FieldMention& f) { return f.type == type && f.field == field; });
  }

  // With a chat model: the lookup's records (and dense passages) are the
  // evidence the model answers from.
  Result<bool> Synthesize(RetrievalResult evidence, double c_link, double agreement) {
    QueryOptions q = VectorQuery();
    FLOWRAG_ASSIGN_OR_RETURN(RetrievalResult dense, deps_.query(question_, q, deps_.pipeline.chat));
    for (ScoredPassage& p : dense.passages) evidence.passages.push_back(std::move(p));
    PipelineDeps pd = deps_.pipeline;
    pd.retrieve = [&](std::string_view, ChatModel*) -> Result<RetrievalResult> { return evidence; };
    AnswerOptions ao = options_;
    ao.pipeline = "single";
    FLOWRAG_ASSIGN_OR_RETURN(Answer a, RunAnswerPipeline(question_, ao, pd));
    double ground = PassageGrounding(a);
    for (const std::string& v : lookup_.values) {
      if (EntityKey(v) == EntityKey(a.text)) ground = 1.0;
    }
    return Accept(std::move(a), "SchemaLookup + synthesis", c_link * lookup_.c_node * agreement, ground,
                  /*check_similarity=*/false);
  }

  QueryOptions VectorQuery() const {
    QueryOptions q = options_.query;
    q.method = options_.schema.vector_method;
    q.params.clear();
    return q;
  }

  Result<bool> RunPassages(const std::string& tool, double c_link) {
    const bool vector = tool == "VectorRAG";
    QueryOptions q = vector ? VectorQuery() : options_.query;
    if (!vector) {
      q.method = options_.schema.graph_method;
      q.params.clear();
    }
    // Entity and time filters (D.1): records the constraints matched, and
    // passages naming a matched value or a year of the question, first.
    // One hop along link fields: the text documents a matched record's
    // values name (a table cell naming a linked page) come first too.
    std::set<std::string> docs, linked;
    std::vector<std::string> values;
    for (const ValueMatch& m : analysis_.constraints) {
      values.push_back(ToLowerAscii(m.value));
      for (uint32_t r : m.records) {
        const IndexedRecord& rec = deps_.index->records()[r];
        docs.insert(rec.document_id);
        for (const auto& [f, v] : rec.fields) linked.insert(EntityKey(v));
      }
    }
    // Time filter: passages stating a year the question names.
    for (int y : analysis_.years) values.push_back(std::to_string(y));
    const size_t keep = q.top_k;
    if (vector && !values.empty()) q.top_k = keep * 8;
    PipelineDeps pd = deps_.pipeline;
    pd.retrieve = [&](std::string_view query, ChatModel* chat) -> Result<RetrievalResult> {
      const std::string_view asked = vector && !plan_.vector_query.empty() ? plan_.vector_query : query;
      FLOWRAG_ASSIGN_OR_RETURN(RetrievalResult r, deps_.query(asked, q, chat));
      if (vector && !values.empty()) {
        std::stable_partition(r.passages.begin(), r.passages.end(), [&](const ScoredPassage& p) {
          if (docs.count(p.document_id) || linked.count(EntityKey(p.title))) return true;
          const std::string text = ToLowerAscii(p.title + "\n" + p.text);
          return std::any_of(values.begin(), values.end(),
                             [&](const std::string& v) { return text.find(v) != std::string::npos; });
        });
        if (r.passages.size() > keep) r.passages.resize(keep);
      }
      return r;
    };
    AnswerOptions ao = options_;
    ao.pipeline = "single";
    FLOWRAG_ASSIGN_OR_RETURN(Answer a, RunAnswerPipeline(question_, ao, pd));
    if (vector) {
      FLOWRAG_ASSIGN_OR_RETURN(bool done, RunReverseHop(a, c_link));
      if (done) return true;
    }
    const double ground = PassageGrounding(a);
    return Accept(std::move(a), tool, c_link * NodeConfidence(), ground, vector);
  }

  // GraphTraverse backwards along link fields: the question asks for a field
  // of some type ("What team ..."), and one of the best retrieved pages is
  // what a record of that type links to (a cell naming the page): the
  // answer is that record's field. The page is the bridge.
  Result<bool> RunReverseHop(const Answer& vector_answer, double c_link) {
    std::vector<const FieldMention*> asked_fields;
    for (const FieldMention& f : analysis_.fields) {
      if (AsksForField(question_, f.field)) asked_fields.push_back(&f);
    }
    if (asked_fields.empty()) return false;
    const auto& passages = vector_answer.retrieval.passages;
    for (size_t i = 0; i < passages.size() && i < options_.context_passages; ++i) {
      const ScoredPassage& page = passages[i];
      if (deps_.index->IsRecordDocument(page.document_id)) continue;
      const auto links = deps_.index->RecordsLinkingTo(page.title);
      // The first asked field (best first) that a linking record holds
      // besides the link itself.
      const FieldMention* asked = nullptr;
      std::vector<uint32_t> records;
      std::vector<std::string> values;
      for (const FieldMention* f : asked_fields) {
        for (const auto& [r, field] : links) {
          const IndexedRecord& rec = deps_.index->records()[r];
          if (rec.type != f->type || field == f->field) continue;
          for (const auto& [name, v] : rec.fields) {
            if (name != f->field || v.empty() || EntityKey(v) == EntityKey(page.title)) continue;
            records.push_back(r);
            if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
          }
        }
        if (!values.empty()) {
          asked = f;
          break;
        }
      }
      if (asked == nullptr) continue;
      const IndexedRecord& rec = deps_.index->records()[records[0]];
      AnswerStep retrieved;
      retrieved.query = "VectorRAG(" + std::string(question_) + ")";
      retrieved.answer = vector_answer.answered ? vector_answer.text : "";
      for (const ScoredPassage& p : passages) retrieved.passage_ids.push_back(p.passage_id);
      retrieved.summary = "VectorRAG: page \"" + page.title + "\" is linked from records";
      out_.steps.push_back(std::move(retrieved));
      AddUsage(vector_answer.usage, &out_.usage);
      AnswerStep step;
      step.query = "GraphTraverse(reverse link: " + page.title + " -> " + rec.type + "." + asked->field + ")";
      step.answer = values[0];
      step.passage_ids = {page.passage_id, snap_.passage(rec.passage).id};
      step.summary = "GraphTraverse: " + std::to_string(records.size()) + " records link to the page";
      out_.steps.push_back(std::move(step));
      out_.text = values[0];
      out_.answered = true;
      out_.answerer = "schema-lookup";
      out_.reasoning = "the page \"" + page.title + "\" is linked from " + rec.type + " records; their " +
                       asked->field + " is the answer";
      out_.retrieval.method = "schema-lookup";
      out_.retrieval.passages = {page, snap_.Scored(rec.passage, 1.0)};
      const std::string line = asked->field + ": " + values[0];
      const std::string& doc = snap_.document_of(rec.passage).text;
      const size_t at = doc.find("\n" + line);
      Citation record;
      record.marker = 1;
      record.passage_id = snap_.passage(rec.passage).id;
      record.document_id = rec.document_id;
      record.title = rec.name;
      record.quote = at == std::string::npos ? line : doc.substr(at + 1, line.size());
      record.begin = at == std::string::npos ? 0 : static_cast<uint32_t>(at + 1);
      record.end = record.begin + static_cast<uint32_t>(record.quote.size());
      Citation bridge;
      bridge.marker = 2;
      bridge.passage_id = page.passage_id;
      bridge.document_id = page.document_id;
      bridge.title = page.title;
      bridge.quote = page.text.substr(0, page.text.find('\n'));
      bridge.begin = page.begin;
      bridge.end = page.begin + static_cast<uint32_t>(bridge.quote.size());
      out_.citations = {std::move(record), std::move(bridge)};
      out_.confidence = c_link * options_.schema.retry_link / static_cast<double>(values.size());
      return true;
    }
    return false;
  }

  // Records the step; keeps the answer when it is grounded.
  bool Accept(Answer a, const std::string& tool, double c_partial, double ground,
              bool check_similarity) {
    AnswerStep step;
    step.query = tool.find('(') == std::string::npos ? tool + "(" + std::string(question_) + ")" : tool;
    step.answer = a.answered ? a.text : "";
    for (const ScoredPassage& p : a.retrieval.passages) step.passage_ids.push_back(p.passage_id);
    AddUsage(a.usage, &out_.usage);
    for (std::string& w : a.warnings) out_.warnings.push_back(std::move(w));
    if (ground <= 0.0) {
      step.summary = tool + ": " +
                     (a.retrieval.passages.empty() ? std::string("no passages")
                      : a.answered           ? "answer \"" + a.text + "\" not supported by its citations"
                                             : "no answer in " + std::to_string(a.retrieval.passages.size()) +
                                                   " passages");
      out_.steps.push_back(std::move(step));
      return false;
    }
    double c = c_partial * ground;
    if (check_similarity && !a.retrieval.passages.empty() &&
        a.retrieval.passages[0].score < options_.schema.min_similarity) {
      c *= options_.schema.low_similarity_discount;
      out_.warnings.push_back("low retrieval similarity (" +
                              std::to_string(a.retrieval.passages[0].score) + " < " +
                              std::to_string(options_.schema.min_similarity) + ")");
    }
    step.summary = tool + ": grounded (" + std::to_string(ground) + ")";
    out_.steps.push_back(std::move(step));
    out_.text = std::move(a.text);
    out_.answered = true;
    out_.reasoning = tool + ": " + a.reasoning;
    out_.answerer = a.answerer;
    out_.citations = std::move(a.citations);
    out_.retrieval = std::move(a.retrieval);
    out_.confidence = c;
    return true;
  }

  std::string_view question_;
  const AnswerOptions& options_;
  const SchemaAgentDeps& deps_;
  const Snapshot& snap_;
  QuestionAnalysis analysis_;
  ToolPlan plan_;            // the model's (empty offline)
  std::optional<SchemaContract> scoped_;  // C.6: this question's extended contract
  Lookup lookup_;
  Answer out_;
};

}  // namespace

Result<Answer> RunSchemaAgent(std::string_view question, const AnswerOptions& options,
                              const SchemaAgentDeps& deps) {
  if (deps.index == nullptr || deps.snapshot == nullptr) {
    return Status::FailedPrecondition("pipeline \"schema\": the store has no schema contract (run flowrag ingest)");
  }
  return Agent(question, options, deps).Run();
}

}  // namespace flowrag
