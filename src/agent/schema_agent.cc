// RunSchemaAgent (agent/schema_agent.h).
#include "agent/schema_agent.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <span>

#include "agent/answer_lexicon.h"
#include "agent/schema_lookup.h"
#include "agent/tool_plan.h"
#include "common/text.h"
#include "lexical/aho_corasick.h"
#include "schema/query_extension.h"
#include "vector/vector_index.h"

namespace flowrag {
namespace {

// True when `field`'s name is what the question asks for: a word of the
// question's focus names a word of the field (NamesFieldWord); without a
// focus, one of its words is within the first three content words after
// the question word.
bool AsksForField(const QuestionAnalysis& a, std::string_view question, const std::string& field) {
  TokenizerOptions o;
  o.stem = false;
  if (!a.focus.empty()) {
    for (const std::string& t : Tokenize(field, o)) {
      for (const std::string& w : a.focus) {
        if (NamesFieldWord(w, t)) return true;
      }
    }
    return false;
  }
  static const std::set<std::string> kQuestionWords = {"what", "which", "who", "whom", "whose",
                                                       "where", "when", "how"};
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

// D.3 stage 2 (ii): the uncertainty phrase an answer contains ("I cannot
// determine ..."), or "". Phrases match whole words anywhere; the single
// words "unknown" and "unclear" only as the whole answer.
std::string UncertaintyPhrase(std::string_view answer) {
  static const char* const kPhrases[] = {
      "cannot determine",      "can t determine",      "cannot be determined", "unable to determine",
      "not possible to determine", "impossible to determine", "cannot answer", "can t answer",
      "unable to answer",      "cannot be answered",   "not enough information", "insufficient information",
      "no information",        "not mentioned",        "not specified",         "not stated",
      "not provided",          "does not mention",     "does not say",          "does not specify",
      "do not know",           "don t know",           "not sure",              "cannot find",
      "could not find",        "couldn t find",        "no relevant",           "not clear"};
  const std::string key = EntityKey(answer);
  if (key == "unknown" || key == "unclear") return key;
  const std::string padded = " " + key + " ";
  for (const char* p : kPhrases) {
    if (padded.find(" " + std::string(p) + " ") != std::string::npos) return p;
  }
  return "";
}

// Stage 2: how well the passages an answer cites support it.
double PassageGrounding(const Answer& a) {
  if (!a.answered || a.text.empty()) return 0.0;
  const std::string answer = ToLowerAscii(a.text);
  // A yes/no answer is concluded from the sentence it cites, never quoted:
  // partial support (0.7) when it cites a retrieved passage.
  if (answer == "yes" || answer == "no") {
    for (const Citation& c : a.citations) {
      for (const ScoredPassage& p : a.retrieval.passages) {
        if (p.passage_id == c.passage_id) return 0.7;
      }
    }
    return 0.0;
  }
  const std::vector<std::string> words = Tokenize(a.text);
  double best = 0.0;
  for (const Citation& c : a.citations) {
    for (const ScoredPassage& p : a.retrieval.passages) {
      if (p.passage_id != c.passage_id) continue;
      // A file name standing in for a title grounds nothing.
      const std::string text = ToLowerAscii((IsFileLabel(p.title) ? "" : p.title + "\n") + p.text);
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
    if (!options_.schema.ood_gate || !deps_.index->contract().routing.ood_gate) return "";
    if (plan_.out_of_scope) return "the model: " + plan_.reason;
    if (analysis_.realtime) return "the question asks for real-time information";
    const SchemaIndex& index = *deps_.index;
    // Only when no year of the question is in the data: "2019 and 2018"
    // compares a year the data has with one it may spell otherwise.
    const auto outside = [&](int y) { return y < index.min_year() || y > index.max_year(); };
    if (index.min_year() > 0 && !analysis_.years.empty() &&
        std::all_of(analysis_.years.begin(), analysis_.years.end(), outside)) {
      const int y = analysis_.years.front();
      return "year " + std::to_string(y) + " is outside the data (" + std::to_string(index.min_year()) +
             "-" + std::to_string(index.max_year()) + ")";
    }
    // A name the store lacks puts the question out of scope only when the
    // question names nothing the data has (a value, another known name, a
    // year of the data): "the Superman roller coaster located at Samarai
    // Summit" is about a record the data holds.
    const bool year_in_data = std::any_of(analysis_.years.begin(), analysis_.years.end(),
                                          [&](int y) { return index.min_year() > 0 && !outside(y); });
    if (!analysis_.unknown_mentions.empty() && analysis_.constraints.empty() &&
        !analysis_.names_known && !year_in_data) {
      return "\"" + analysis_.unknown_mentions[0] + "\" is not known to the schema or the sources";
    }
    return "";
  }

  void Abstain(const std::string& why) {
    out_.answered = false;
    out_.text = "Insufficient Information";
    out_.reasoning = why;
    out_.confidence = 0.0;
    // The evidence looked at stays visible (the first VectorRAG ranking,
    // else the first tool's), uncited.
    if (out_.retrieval.passages.empty()) out_.retrieval = std::move(seen_);
  }

  Status Rounds() {
    // The model's order first (when it planned), then the preference order.
    std::vector<std::string> plan;
    auto add = [&](const std::string& tool) {
      if (tool == "SchemaLookup" && analysis_.constraints.empty()) return;
      if (std::find(plan.begin(), plan.end(), tool) == plan.end()) plan.push_back(tool);
    };
    for (const std::string& tool : plan_.tools) add(tool);
    // D.4: a question that needs descriptive evidence goes to VectorRAG first.
    if (analysis_.descriptive) add("VectorRAG");
    // D.4's preference order, from the contract's routing section.
    for (const std::string& tool : deps_.index->contract().routing.preference) add(tool);
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

  // SchemaLookup (D.1) and, when it followed relationships, GraphTraverse:
  // their steps, then the answer from the looked-up values (or the link hop
  // or the chat model's synthesis over the records). False when there is
  // no value to answer with.
  Result<bool> RunLookup(double c_link) {
    lookup_ = SchemaLookup(question_, analysis_, *deps_.index);
    const bool hopped = !lookup_.bridge.empty();
    RecordLookupSteps(hopped);
    if (lookup_.values.empty()) {
      if (hopped) out_.steps.back().summary += "; no value for the asked field";
      return false;
    }
    FLOWRAG_ASSIGN_OR_RETURN(bool linked, RunLinkHop(c_link));
    if (linked) return true;
    RetrievalResult evidence = LookupEvidence();
    const bool list = analysis_.answer_type == "list" || lookup_.aggregated;
    // Ambiguity: several records disagree on a single answer.
    const double agreement = list ? 1.0 : 1.0 / static_cast<double>(lookup_.values.size());
    // Path confidence: the relationships followed (1.0 without).
    const double c_path = c_link * lookup_.c_path;
    if (deps_.pipeline.chat != nullptr && options_.answerer != "extractive") {
      return Synthesize(evidence, c_path, agreement);
    }
    out_.text = lookup_.values[0];
    if (list && !lookup_.aggregated) {
      for (size_t i = 1; i < lookup_.values.size(); ++i) out_.text += ", " + lookup_.values[i];
    }
    out_.answered = true;
    out_.answerer = "schema-lookup";
    out_.reasoning = LookupReasoning(hopped, agreement);
    CiteLookup(list);
    out_.confidence = c_path * lookup_.c_node * 1.0 * agreement;
    FLOWRAG_RETURN_IF_ERROR(AddDenseContext(&evidence));
    out_.retrieval = std::move(evidence);
    return true;
  }

  // The SchemaLookup step over the matched records and, when the lookup
  // hopped, the GraphTraverse step to the answer records.
  void RecordLookupSteps(bool hopped) {
    const SchemaIndex& index = *deps_.index;
    const std::vector<uint32_t>& matched = hopped ? lookup_.bridge : lookup_.records;
    AnswerStep step;
    std::string call = "SchemaLookup(" + (hopped ? lookup_.matched_type : lookup_.type) + ":";
    for (const std::string& c : lookup_.constraints) call += " " + c;
    if (!hopped) call += " -> " + (lookup_.field.empty() ? std::string("name") : lookup_.field);
    step.query = call + ")";
    for (uint32_t r : matched) {
      step.passage_ids.push_back(snap_.passage(index.records()[r].passage).id);
    }
    if (!hopped) {
      for (const std::string& v : lookup_.values) {
        step.answer += (step.answer.empty() ? "" : "; ") + v;
      }
      step.summary = LookupSummary();
      out_.steps.push_back(std::move(step));
      return;
    }
    for (uint32_t r : matched) {
      step.answer += (step.answer.empty() ? "" : "; ") + index.records()[r].name;
    }
    step.summary = "SchemaLookup: " + std::to_string(matched.size()) + " " + lookup_.matched_type +
                   " records; the question asks about " + lookup_.type;
    out_.steps.push_back(std::move(step));
    AnswerStep traverse;
    traverse.query = "GraphTraverse(" + lookup_.matched_type;
    for (const std::string& rel : lookup_.path) traverse.query += " -[" + rel + "]-";
    traverse.query +=
        "> " + lookup_.type + (lookup_.field.empty() ? std::string() : "." + lookup_.field) + ")";
    for (uint32_t r : lookup_.records) {
      traverse.passage_ids.push_back(snap_.passage(index.records()[r].passage).id);
    }
    for (const std::string& v : lookup_.values) {
      traverse.answer += (traverse.answer.empty() ? "" : "; ") + v;
    }
    traverse.summary = "GraphTraverse: " + std::to_string(lookup_.records.size()) + " " +
                       lookup_.type + " records by the schema's relationships, " +
                       std::to_string(lookup_.values.size()) + " values";
    out_.steps.push_back(std::move(traverse));
  }

  // What a lookup without hops found.
  std::string LookupSummary() const {
    const std::string records = std::to_string(lookup_.records.size()) + " records";
    if (!lookup_.values.empty()) {
      return "SchemaLookup: " + records + ", " + std::to_string(lookup_.values.size()) + " values";
    }
    if (!lookup_.given.empty()) {
      return "SchemaLookup: " + records + " matched; their value \"" + lookup_.given +
             "\" is the question's own constraint";
    }
    return "SchemaLookup: " + records + " matched, no value for the asked field";
  }

  // Evidence: the answer records, then the matched records they were
  // reached from.
  RetrievalResult LookupEvidence() const {
    const SchemaIndex& index = *deps_.index;
    RetrievalResult evidence;
    evidence.method = "schema-lookup";
    for (uint32_t r : lookup_.records) {
      evidence.passages.push_back(snap_.Scored(index.records()[r].passage, lookup_.c_node));
    }
    for (uint32_t r : lookup_.bridge) {
      evidence.passages.push_back(snap_.Scored(index.records()[r].passage, lookup_.c_node));
    }
    return evidence;
  }

  // "SchemaLookup on T[, then GraphTraverse R to U] → field", with the
  // aggregation and any disagreement among the records.
  std::string LookupReasoning(bool hopped, double agreement) const {
    std::string returned = lookup_.field.empty() ? std::string("name") : lookup_.field;
    if (lookup_.aggregated) {
      returned = analysis_.aggregate + (lookup_.field.empty() ? "" : " of " + lookup_.field) +
                 " over " + std::to_string(lookup_.records.size()) + " records";
    }
    std::string reasoning = "SchemaLookup on " + (hopped ? lookup_.matched_type : lookup_.type);
    if (hopped) {
      reasoning += ", then GraphTraverse";
      for (const std::string& rel : lookup_.path) reasoning += " " + rel;
      reasoning += " to " + lookup_.type;
    }
    reasoning += " → " + returned +
                 (agreement < 1.0 ? " (" + std::to_string(lookup_.values.size()) +
                                        " records disagree; the first is given)"
                                  : "");
    return reasoning;
  }

  // Each answer record with the answer's value (every one for a list),
  // cited with its "field: value" line; then the matched records, quoting
  // the link that leads to the answer records where the matched record
  // holds it (a foreign key), else its name.
  void CiteLookup(bool list) {
    const SchemaIndex& index = *deps_.index;
    int marker = 1;
    for (uint32_t r : lookup_.records) {
      const std::string value = ValueOf(index.records()[r], lookup_.field);
      if (!list && value != lookup_.values[0]) continue;
      out_.citations.push_back(RecordCitation(r, lookup_.field, marker++));
    }
    for (uint32_t r : lookup_.bridge) {
      std::string field;
      for (const RecordLink& l : index.LinksOf(r)) {
        if (l.outgoing && !l.field.empty() &&
            std::find(lookup_.records.begin(), lookup_.records.end(), l.record) !=
                lookup_.records.end()) {
          field = l.field;
          break;
        }
      }
      out_.citations.push_back(RecordCitation(r, field, marker++));
    }
  }

  // Algorithm 9 answers from the union of the tools' evidence: after the
  // structured records an answer rests on, the dense passages for the
  // question (not cited) fill the retrieval result up to top_k.
  Status AddDenseContext(RetrievalResult* evidence) {
    const size_t top_k = options_.query.top_k;
    if (evidence->passages.size() >= top_k) return Status::Ok();
    FLOWRAG_ASSIGN_OR_RETURN(RetrievalResult dense, deps_.query(question_, VectorQuery(), deps_.pipeline.chat));
    for (ScoredPassage& p : dense.passages) {
      if (evidence->passages.size() >= top_k) break;
      const bool have = std::any_of(evidence->passages.begin(), evidence->passages.end(),
                                    [&](const ScoredPassage& e) { return e.passage_id == p.passage_id; });
      if (!have) evidence->passages.push_back(std::move(p));
    }
    return Status::Ok();
  }

  // A SourceRecord citation quoting its "field: value" line (the record's
  // first line when `field` is "" or the line is not in the document).
  Citation RecordCitation(uint32_t record, const std::string& field, int marker) const {
    const IndexedRecord& rec = deps_.index->records()[record];
    const ScoredPassage p = snap_.Scored(rec.passage, 1.0);
    Citation c;
    c.marker = marker;
    c.passage_id = p.passage_id;
    c.document_id = p.document_id;
    c.title = p.title;
    const std::string line = field.empty() ? "" : field + ": " + ValueOf(rec, field);
    const std::string_view doc = snap_.DocumentText(snap_.passage(rec.passage).document);
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
    return c;
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
    if (AsksForField(analysis_, question_, lookup_.field) || PlanReturns(lookup_.type, lookup_.field)) return false;
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

  // The VectorRAG filter (D.1: entity and temporal pre-filtering from the
  // question's constraints). Entity: the passages about the records the
  // constraints matched (their own, those the graph says mention their
  // entities, and the pages their link fields name). Time: passages stating
  // a year within the question's years (their range). Both apply when both
  // are given; `entities` is empty without entity constraints.
  struct PassageFilter {
    std::set<uint32_t> entities;
    bool by_entity = false;
    std::set<uint32_t> records;      // the constrained records
    std::set<std::string> types;     // their entity types
    int year_min = 0, year_max = 0;  // 0: no time filter
    std::string described;

    bool active() const { return by_entity || year_min > 0; }
    bool Keeps(uint32_t passage, const Snapshot& snap) const {
      if (by_entity && !entities.count(passage)) return false;
      if (year_min == 0) return true;
      const std::string text = std::string(snap.document_of(passage).title) + "\n" +
                               std::string(snap.PassageText(passage));
      for (int y : YearsIn(text)) {
        if (y >= year_min && y <= year_max) return true;
      }
      return false;
    }
  };

  // True when `p` is about a record of the filter's types that the filter
  // does not keep (or is not a passage of this snapshot).
  bool AboutAnotherEntity(const ScoredPassage& p, const PassageFilter& filter) const {
    const std::optional<uint32_t> at = PassageIndex(p.passage_id);
    if (!at) return true;
    for (uint32_t r : deps_.index->RecordsAbout(*at, snap_)) {
      if (filter.types.count(deps_.index->records()[r].type) && !filter.records.count(r)) return true;
    }
    return false;
  }

  // The snapshot index of a store passage id (passages are in id order).
  std::optional<uint32_t> PassageIndex(int64_t id) const {
    uint32_t lo = 0, hi = static_cast<uint32_t>(snap_.num_passages());
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (snap_.passage(mid).id < id) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo < snap_.num_passages() && snap_.passage(lo).id == id) return lo;
    return std::nullopt;
  }

  PassageFilter VectorFilter() const {
    PassageFilter f;
    const SchemaIndex& index = *deps_.index;
    std::vector<std::string> names;
    for (const ValueMatch& m : analysis_.constraints) {
      names.push_back(m.value);
      for (uint32_t p : index.LinkedPassages(m.value)) f.entities.insert(p);
      f.types.insert(m.type);
      for (uint32_t r : m.records) {
        f.records.insert(r);
        for (uint32_t p : index.PassagesAbout(r, snap_)) f.entities.insert(p);
        for (const auto& [field, v] : index.records()[r].fields) {
          for (uint32_t p : index.LinkedPassages(v)) f.entities.insert(p);
        }
      }
    }
    f.by_entity = !names.empty();
    if (f.by_entity) {
      f.described = "entities ";
      for (size_t i = 0; i < names.size() && i < 3; ++i) f.described += (i ? ", " : "") + names[i];
      if (names.size() > 3) f.described += ", ...";
    }
    if (!analysis_.years.empty()) {
      f.year_min = *std::min_element(analysis_.years.begin(), analysis_.years.end());
      f.year_max = *std::max_element(analysis_.years.begin(), analysis_.years.end());
      f.described += std::string(f.described.empty() ? "" : "; ") + "years " + std::to_string(f.year_min) +
                     (f.year_max != f.year_min ? "-" + std::to_string(f.year_max) : "");
    }
    return f;
  }

  // Dense retrieval restricted to the filter's entity passages (the index's
  // id filter: exact pre-filtering, D.1), best `k`.
  Result<RetrievalResult> FilteredDense(std::string_view query, const PassageFilter& f, size_t k) const {
    std::string text(query);
    FLOWRAG_ASSIGN_OR_RETURN(FloatMatrix qv, snap_.embedder()->Embed(std::span<const std::string>(&text, 1)));
    if (qv.cols != snap_.dense()->Dimension()) {
      return Status::FailedPrecondition("VectorRAG: query embedding has " + std::to_string(qv.cols) +
                                        " dimensions, the index has " +
                                        std::to_string(snap_.dense()->Dimension()));
    }
    VectorSearchParams params;
    params.k = k;
    params.filter = [&](uint32_t id) { return f.Keeps(id, snap_); };
    VectorSearchStats stats;
    RetrievalResult r;
    r.method = "dense";
    for (const VectorHit& h : snap_.dense()->Search(qv.row(0), params, &stats)) {
      r.passages.push_back(snap_.Scored(h.id, h.score));
    }
    r.diagnostics.candidates_scored = stats.candidates_scored;
    return r;
  }

  // Fills `kept` (the filter's passages, first) up to `keep` from the
  // unfiltered ranking: passages about no other entity of the constrained
  // types first (a paragraph explaining a table row is linked to no
  // record), then the rest in ranking order, so the answer always reads
  // top_k passages when the store has them. Returns the number added.
  size_t PadFromRanking(std::vector<ScoredPassage> ranking, const PassageFilter& filter, size_t keep,
                        std::vector<ScoredPassage>* kept) const {
    const size_t before = kept->size();
    std::vector<bool> taken(ranking.size(), false);
    for (bool allow_other : {false, true}) {
      for (size_t i = 0; i < ranking.size() && kept->size() < keep; ++i) {
        if (taken[i]) continue;
        const int64_t id = ranking[i].passage_id;
        const bool have = std::any_of(kept->begin(), kept->end(),
                                      [&](const ScoredPassage& e) { return e.passage_id == id; });
        if (have) {
          taken[i] = true;
          continue;
        }
        if (!allow_other && AboutAnotherEntity(ranking[i], filter)) continue;
        kept->push_back(std::move(ranking[i]));
        taken[i] = true;
      }
    }
    return kept->size() - before;
  }

  Result<bool> RunPassages(const std::string& tool, double c_link) {
    const bool vector = tool == "VectorRAG";
    QueryOptions q = vector ? VectorQuery() : options_.query;
    if (!vector) {
      q.method = options_.schema.graph_method;
      q.params.clear();
    }
    const PassageFilter filter = vector ? VectorFilter() : PassageFilter{};
    const size_t keep = q.top_k;
    filter_note_.clear();
    PipelineDeps pd = deps_.pipeline;
    pd.retrieve = [&](std::string_view query, ChatModel* chat) -> Result<RetrievalResult> {
      const std::string_view asked = vector && !plan_.vector_query.empty() ? plan_.vector_query : query;
      if (!filter.active()) return deps_.query(asked, q, chat);
      RetrievalResult r;
      size_t before = 0;
      if (filter.by_entity && q.method == "dense" && snap_.dense() != nullptr && snap_.embedder() != nullptr) {
        FLOWRAG_ASSIGN_OR_RETURN(r, FilteredDense(asked, filter, keep));
        before = snap_.num_passages();
      } else {
        // Other retrievers: their ranking, deepened, then filtered.
        QueryOptions deep = q;
        deep.top_k = std::max<size_t>(keep * 8, 50);
        FLOWRAG_ASSIGN_OR_RETURN(r, deps_.query(asked, deep, chat));
        before = r.passages.size();
        r.passages.erase(std::remove_if(r.passages.begin(), r.passages.end(),
                                        [&](const ScoredPassage& p) {
                                          const std::optional<uint32_t> at = PassageIndex(p.passage_id);
                                          return !at || !filter.Keeps(*at, snap_);
                                        }),
                         r.passages.end());
        if (r.passages.size() > keep) r.passages.resize(keep);
      }
      if (!r.passages.empty()) {
        filter_note_ = "filter (" + filter.described + ") kept " + std::to_string(r.passages.size()) +
                       " of " + std::to_string(before) + " passages";
        if (r.passages.size() < keep && filter.by_entity) {
          FLOWRAG_ASSIGN_OR_RETURN(RetrievalResult all, deps_.query(asked, q, chat));
          const size_t filled = PadFromRanking(std::move(all.passages), filter, keep, &r.passages);
          if (filled > 0) filter_note_ += ", then " + std::to_string(filled) + " of the unfiltered ranking";
        }
        return r;
      }
      filter_note_ = "filter (" + filter.described + ") left no passage; the unfiltered ranking is used";
      out_.warnings.push_back("VectorRAG " + filter_note_);
      return deps_.query(asked, q, chat);
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
      if (AsksForField(analysis_, question_, f.field)) asked_fields.push_back(&f);
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
      AddStep(std::move(retrieved), "VectorRAG");
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
      FLOWRAG_RETURN_IF_ERROR(AddDenseContext(&out_.retrieval));
      const std::string line = asked->field + ": " + values[0];
      const std::string_view doc = snap_.DocumentText(snap_.passage(rec.passage).document);
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

  // Why an answer cannot stand, or "": it only repeats a constraint the
  // question gave ("Which orders did Alice Smith place?" → "Alice Smith"),
  // or it states that the evidence does not answer (D.3 stage 2 (ii)).
  std::string Flaw(const std::string& answer) const {
    const std::string key = EntityKey(answer);
    const TokenizedText q(question_);
    for (const ValueMatch& c : analysis_.constraints) {
      std::string mention;
      if (c.token_end > c.token_begin && c.token_end <= q.size()) {
        mention = EntityKey(q.text().substr(q.token(c.token_begin).begin,
                                            q.token(c.token_end - 1).end - q.token(c.token_begin).begin));
      }
      if (key == EntityKey(c.value) || key == mention) {
        return "answer \"" + answer + "\" is the question's own constraint";
      }
    }
    const std::string phrase = UncertaintyPhrase(answer);
    if (!phrase.empty()) return "answer \"" + answer + "\" states uncertainty (\"" + phrase + "\")";
    return "";
  }

  // A VectorRAG step says what its filter did.
  void AddStep(AnswerStep step, const std::string& tool) {
    if (tool.rfind("VectorRAG", 0) == 0 && !filter_note_.empty()) step.summary += "; " + filter_note_;
    out_.steps.push_back(std::move(step));
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
    if (!a.retrieval.passages.empty() && (seen_.passages.empty() || (check_similarity && !seen_vector_))) {
      seen_ = a.retrieval;
      seen_vector_ = check_similarity;
    }
    const std::string flaw = a.answered ? Flaw(a.text) : "";
    if (!flaw.empty()) {
      step.summary = tool + ": " + flaw;
      AddStep(std::move(step), tool);
      return false;
    }
    if (ground <= 0.0) {
      step.summary = tool + ": " +
                     (a.retrieval.passages.empty() ? std::string("no passages")
                      : a.answered           ? "answer \"" + a.text + "\" not supported by its citations"
                                             : "no answer in " + std::to_string(a.retrieval.passages.size()) +
                                                   " passages");
      AddStep(std::move(step), tool);
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
    AddStep(std::move(step), tool);
    out_.text = std::move(a.text);
    out_.answered = true;
    out_.reasoning = tool + ": " + a.reasoning;
    out_.answerer = a.answerer;
    out_.citations = std::move(a.citations);
    out_.retrieval = std::move(a.retrieval);
    out_.confidence = c;
    return true;
  }

  RetrievalResult seen_;       // evidence of a rejected tool run, shown when abstaining
  bool seen_vector_ = false;   // seen_ is a VectorRAG ranking
  std::string_view question_;
  const AnswerOptions& options_;
  const SchemaAgentDeps& deps_;
  const Snapshot& snap_;
  QuestionAnalysis analysis_;
  ToolPlan plan_;            // the model's (empty offline)
  std::optional<SchemaContract> scoped_;  // C.6: this question's extended contract
  Lookup lookup_;
  std::string filter_note_;  // the last VectorRAG filter's outcome (for its step)
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
