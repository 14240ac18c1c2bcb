#include "agent/pipeline.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <unordered_set>

#include "agent/llm_answer.h"
#include "common/text.h"
#include "retrieval/keywords.h"
#include "retrieval/query_llm.h"

namespace flowrag {
namespace {

using Clock = std::chrono::steady_clock;

// The passages gathered so far, unique by id, in the order first seen.
class Evidence {
 public:
  // `shown`: how many of r's passages the answerer reads.
  void Add(const RetrievalResult& r, size_t shown) {
    for (size_t i = 0; i < r.passages.size(); ++i) {
      const ScoredPassage& p = r.passages[i];
      if (i < shown && shown_ids_.insert(p.passage_id).second) shown_.push_back(p);
      if (seen_.insert(p.passage_id).second) passages_.push_back(p);
    }
    for (const std::string& c : r.context) {
      if (relation_seen_.insert(c).second) relations_.push_back(c);
    }
    retrieval_ms_ += r.diagnostics.time_ms;
    last_ = r;
  }
  // `first` (e.g. the last round's passages), then everything else gathered.
  std::vector<ScoredPassage> Ordered(const std::vector<ScoredPassage>& first) const {
    std::vector<ScoredPassage> out = first;
    std::unordered_set<int64_t> in;
    for (const ScoredPassage& p : first) in.insert(p.passage_id);
    for (const ScoredPassage& p : passages_) {
      if (!in.count(p.passage_id)) out.push_back(p);
    }
    return out;
  }
  const std::vector<ScoredPassage>& passages() const { return passages_; }
  // Every round's first `shown` passages, unique, in round order.
  const std::vector<ScoredPassage>& shown() const { return shown_; }
  const std::vector<std::string>& relations() const { return relations_; }
  // The last round's result (its subgraph is the answer's), moved out once.
  RetrievalResult TakeLast() { return std::move(last_); }
  double retrieval_ms() const { return retrieval_ms_; }

 private:
  std::vector<ScoredPassage> passages_;
  std::unordered_set<int64_t> seen_;
  std::vector<ScoredPassage> shown_;
  std::unordered_set<int64_t> shown_ids_;
  std::vector<std::string> relations_;
  std::unordered_set<std::string> relation_seen_;
  RetrievalResult last_;
  double retrieval_ms_ = 0.0;
};

std::vector<ScoredPassage> Head(const std::vector<ScoredPassage>& ps, size_t n) {
  return {ps.begin(), ps.begin() + static_cast<std::ptrdiff_t>(std::min(n, ps.size()))};
}

std::vector<int64_t> Ids(const std::vector<ScoredPassage>& ps) {
  std::vector<int64_t> out;
  for (const ScoredPassage& p : ps) out.push_back(p.passage_id);
  return out;
}

// The pages of the quote at bytes [begin, end) of `p.text`: the passage's
// first page plus the page breaks (U+000C) before it in the passage.
void SetQuotePages(const ScoredPassage& p, size_t begin, size_t end, Citation* c) {
  if (p.page_first <= 0) return;
  const std::string_view text(p.text);
  begin = std::min(begin, text.size());
  end = std::clamp(end, begin, text.size());
  const auto breaks_in = [&](size_t from, size_t to) {
    return static_cast<int32_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(from),
                                           text.begin() + static_cast<std::ptrdiff_t>(to), '\f'));
  };
  c->page_first = std::min(p.page_first + breaks_in(0, begin), std::max(p.page_first, p.page_last));
  c->page_last = end > begin ? std::min(c->page_first + breaks_in(begin, end - 1),
                                        std::max(p.page_first, p.page_last))
                             : c->page_first;
}

// The sentence of `p` that contains `answer` (case-insensitively), else its first.
Citation CiteAnswer(const ScoredPassage& p, int marker, std::string_view answer) {
  Citation c;
  c.marker = marker;
  c.passage_id = p.passage_id;
  c.document_id = p.document_id;
  c.title = p.title;
  const std::vector<TextSpan> sentences = SplitSentences(p.text);
  TextSpan pick = sentences.empty() ? TextSpan{0, p.text.size()} : sentences.front();
  const std::string needle = ToLowerAscii(answer);
  if (!needle.empty()) {
    for (const TextSpan& s : sentences) {
      if (ToLowerAscii(std::string_view(p.text).substr(s.begin, s.end - s.begin)).find(needle) !=
          std::string::npos) {
        pick = s;
        break;
      }
    }
  }
  c.quote = p.text.substr(pick.begin, pick.end - pick.begin);
  c.begin = p.begin + static_cast<uint32_t>(pick.begin);
  c.end = p.begin + static_cast<uint32_t>(pick.end);
  SetQuotePages(p, pick.begin, pick.end, &c);
  return c;
}

class Pipeline {
 public:
  Pipeline(std::string_view question, const AnswerOptions& options, const PipelineDeps& deps)
      : question_(question),
        options_(options),
        deps_(deps),
        start_(Clock::now()),
        profile_(ProfileQuestion(question)) {
    if (deps.chat != nullptr) {
      counter_.emplace(deps.chat, deps.prices);
      const bool llm = options.answerer == "llm" || options.answerer == "auto";
      if (llm) llm_ = &*counter_;
    }
  }

  Result<Answer> Run() {
    answer_.question = question_;
    answer_.pipeline = options_.pipeline;
    Status st = options_.pipeline == "cot"         ? Cot()
                : options_.pipeline == "decompose" ? Decompose()
                                                   : Single();
    FLOWRAG_RETURN_IF_ERROR(st);
    answer_.answerer = llm_ != nullptr ? "llm:" + llm_->Model() : "extractive";
    if (counter_) answer_.usage = counter_->tokens();
    answer_.time_ms = std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
    return std::move(answer_);
  }

 private:
  ChatModel* RetrievalChat() { return counter_ ? &*counter_ : nullptr; }

  Result<RetrievalResult> Retrieve(std::string_view query) {
    FLOWRAG_ASSIGN_OR_RETURN(RetrievalResult r, deps_.retrieve(query, RetrievalChat()));
    evidence_.Add(r, options_.context_passages);
    return r;
  }

  void Degrade(std::string_view stage, const Status& error) {
    answer_.warnings.push_back("chat model failed during " + std::string(stage) + " (" +
                               error.ToString() + "); answered extractively from there on");
    llm_ = nullptr;
  }

  bool PastDeadline(size_t rounds_done) {
    if (options_.deadline_ms <= 0.0) return false;
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
    if (ms < options_.deadline_ms) return false;
    answer_.warnings.push_back("deadline of " + std::to_string(options_.deadline_ms) +
                               " ms reached after " + std::to_string(rounds_done) +
                               " round(s); answered from the evidence gathered");
    return true;
  }

  // Reads every passage it is given (callers pass the context).
  ExtractiveAnswer Extract(std::string_view question, const std::vector<ScoredPassage>& passages,
                           const std::vector<std::string>& exclude = {},
                           const std::vector<std::string>& graph_entities = {}) const {
    ExtractiveOptions eo;
    eo.max_passages = passages.size();
    return ExtractAnswer(question, passages, deps_.idf, exclude, eo, options_.style == "long",
                         graph_entities);
  }

  // The final answer, by the model when there is one (from every round's
  // shown passages), else extractively (`offline`, or read from `context`).
  void Finish(std::string_view question, std::vector<ScoredPassage> context, std::string notes,
              const ExtractiveAnswer* offline) {
    answer_.retrieval = evidence_.TakeLast();
    answer_.retrieval.passages =
        llm_ != nullptr ? evidence_.Ordered(evidence_.shown()) : std::move(context);
    answer_.retrieval.context = evidence_.relations();
    answer_.retrieval.diagnostics.time_ms = evidence_.retrieval_ms();
    const std::vector<ScoredPassage>& ctx = answer_.retrieval.passages;
    if (llm_ != nullptr) {
      AnswerContext ac{evidence_.shown(), evidence_.relations(), std::move(notes),
                       options_.conversation};
      AnswerStream* stream = deps_.stream;
      if (stream != nullptr && !stream->Retrieval(answer_.retrieval)) return;
      auto r = LlmAnswerQuestion(*llm_, question, ac, options_.style,
                                 stream != nullptr ? &stream->text_sink() : nullptr);
      if (stream != nullptr && stream->cancelled()) return;  // Ask returns Cancelled
      if (r.ok()) {
        answer_.text = r->text;
        answer_.reasoning = r->reasoning;
        answer_.answered = r->answered;
        answer_.confidence = r->answered ? 1.0 : 0.0;
        CiteMarkers(r->markers, r->text);
        return;
      }
      Degrade("the final answer", r.status());
    }
    const ExtractiveAnswer ex =
        offline != nullptr ? *offline : Extract(question, Head(ctx, options_.context_passages));
    answer_.text = ex.answer;
    answer_.reasoning = ex.reasoning;
    answer_.answered = ex.answered;
    answer_.confidence = ex.confidence;
    // `offline` may have read a different passage list: cite by passage id.
    const std::vector<ScoredPassage>& read =
        offline_read_.empty() || offline == nullptr ? ctx : offline_read_;
    // Long form quotes the sentences it wrote out; short form the ones the
    // answer rests on (its sentence, and the bridge links or compared options).
    const size_t quoted = std::min<size_t>(
        options_.style == "long" ? ExtractiveOptions{}.long_sentences : ex.evidence,
        ex.support.size());
    for (size_t i = 0; i < quoted && ex.answered; ++i) {
      const SentenceRef& s = ex.support[i];
      const ScoredPassage& p = read[s.passage];
      Citation c;
      c.marker = MarkerOf(p.passage_id);
      c.passage_id = p.passage_id;
      c.document_id = p.document_id;
      c.title = p.title;
      c.quote = p.text.substr(s.begin, s.end - s.begin);
      c.begin = p.begin + s.begin;
      c.end = p.begin + s.end;
      SetQuotePages(p, s.begin, s.end, &c);
      if (std::none_of(answer_.citations.begin(), answer_.citations.end(), [&](const Citation& o) {
            return o.passage_id == c.passage_id && o.begin == c.begin;
          })) {
        answer_.citations.push_back(std::move(c));
      }
    }
  }

  int MarkerOf(int64_t passage_id) const {
    const auto& ctx = answer_.retrieval.passages;
    for (size_t i = 0; i < ctx.size(); ++i) {
      if (ctx[i].passage_id == passage_id) return static_cast<int>(i) + 1;
    }
    return 0;
  }

  // Citations for a model answer: the markers it gave; else the passages
  // that contain the answer; else none, with a warning.
  void CiteMarkers(std::vector<int> markers, const std::string& text) {
    const auto& ctx = answer_.retrieval.passages;
    if (markers.empty() && answer_.answered) {
      const std::string needle = ToLowerAscii(text);
      for (size_t i = 0; i < ctx.size() && markers.size() < 3 && !needle.empty(); ++i) {
        if (ToLowerAscii(ctx[i].text).find(needle) != std::string::npos) {
          markers.push_back(static_cast<int>(i) + 1);
        }
      }
      if (markers.empty()) answer_.warnings.push_back("the model cited no passage of the context");
    }
    for (int m : markers) answer_.citations.push_back(CiteAnswer(ctx[m - 1], m, text));
  }

  Status Single() {
    FLOWRAG_ASSIGN_OR_RETURN(RetrievalResult r, Retrieve(question_));
    answer_.steps.push_back({question_, "", "", "", Ids(r.passages)});
    if (llm_ != nullptr) {
      Finish(question_, r.passages, "", nullptr);
      return Status::Ok();
    }
    offline_read_ = Head(r.passages, options_.context_passages);
    const ExtractiveAnswer ex = Extract(question_, offline_read_, {}, GraphEntities(r));
    Finish(question_, r.passages, "", &ex);
    return Status::Ok();
  }

  Status Cot() {
    std::string query = question_;
    std::string summary;
    std::optional<RetrievalResult> first;  // the question's own retrieval, reused offline
    for (size_t round = 0; round < options_.max_steps && llm_ != nullptr; ++round) {
      if (round > 0 && PastDeadline(round)) break;
      FLOWRAG_ASSIGN_OR_RETURN(RetrievalResult r, Retrieve(query));
      if (round == 0) first = r;
      AnswerStep step{query, "", "", "", Ids(r.passages)};
      AnswerContext ac{Head(r.passages, options_.context_passages), r.context, summary,
                       options_.conversation};
      auto res = LlmReason(*llm_, question_, ac);
      if (!res.ok()) {
        Degrade("chain-of-thought step " + std::to_string(round + 1), res.status());
        break;
      }
      summary = res->summary;
      step.summary = res->summary;
      if (res->answer_possible) {
        step.answer = res->answer;
        answer_.steps.push_back(std::move(step));
        break;
      }
      step.follow_up = res->follow_up;
      query = res->follow_up;
      answer_.steps.push_back(std::move(step));
    }
    if (llm_ != nullptr) {
      std::string notes;
      for (const AnswerStep& st : answer_.steps) {
        if (!st.summary.empty()) notes += st.summary + "\n";
      }
      Finish(question_, evidence_.passages(), notes, nullptr);
      return Status::Ok();
    }
    return OfflineCot(std::move(first));
  }

  // Entity names a graph retrieval scored, best first, without its seeds
  // (the question's own entities): where a bridge is likely.
  static std::vector<std::string> GraphEntities(const RetrievalResult& r) {
    std::vector<const GraphNode*> nodes;
    for (const GraphNode& n : r.nodes) {
      if (n.kind == "Entity" && !n.seed) nodes.push_back(&n);
    }
    std::stable_sort(nodes.begin(), nodes.end(),
                     [](const GraphNode* a, const GraphNode* b) { return a->score > b->score; });
    std::vector<std::string> out;
    for (const GraphNode* n : nodes) out.push_back(n->label);
    return out;
  }

  // Offline chain of thought. Round 1 answers the question from its own
  // retrieval (the single pipeline's answer). While the answer leaves
  // question terms unmatched and the passages link to a bridge entity no
  // passage is about (ExtractiveAnswer::bridges, the graph's scored
  // entities first), the next round retrieves with that bridge and the
  // unmatched terms, and answers the question again from everything read so
  // far (the first round's passages first). A round's answer replaces the
  // previous one only when its confidence is higher, so a follow-up can add
  // evidence but not talk the pipeline out of a better-supported answer.
  Status OfflineCot(std::optional<RetrievalResult> first) {
    std::vector<ScoredPassage> context;
    std::unordered_set<int64_t> in_context;
    auto add = [&](const RetrievalResult& r) {
      for (size_t i = 0; i < r.passages.size() && i < options_.context_passages; ++i) {
        if (in_context.insert(r.passages[i].passage_id).second) context.push_back(r.passages[i]);
      }
    };
    std::string query = question_;
    std::vector<std::string> used_bridges;
    std::vector<std::string> graph;
    ExtractiveAnswer best;
    std::vector<ScoredPassage> best_context;
    const size_t first_step = answer_.steps.size();
    for (size_t round = 0; round < options_.max_steps; ++round) {
      if (round > 0 && PastDeadline(round)) break;
      RetrievalResult r;
      if (round == 0 && first) {
        r = std::move(*first);
      } else {
        FLOWRAG_ASSIGN_OR_RETURN(r, Retrieve(query));
      }
      const size_t context_before = context.size();
      add(r);
      for (std::string& g : GraphEntities(r)) graph.push_back(std::move(g));
      AnswerStep step{query, "", "", "", Ids(r.passages)};
      ExtractiveAnswer ex = Extract(question_, context, {}, graph);
      step.answer = ex.answer;
      if (!ex.support.empty()) {
        const SentenceRef& s = ex.support.front();
        step.summary = context[s.passage].text.substr(s.begin, s.end - s.begin);
      }
      // A follow-up's answer counts only when it is more confident and rests
      // on new evidence (the bridge it followed, or a passage this round
      // brought), not on a reshuffle of what was read.
      if (round == 0 || (ex.confidence > best.confidence &&
                         RestsOn(ex, context, used_bridges.back(), context_before) &&
                         !Reroutes(ex, context, best, best_context))) {
        best = ex;
        best_context = context;
      }
      // Yes/no questions are answered "yes" unless they compare two
      // entities' nationalities; comparisons end once their values compare
      // (confident), and otherwise follow the bridge an option lacks.
      const bool closed = profile_.type == AnswerType::kYesNo && !profile_.same_nationality;
      const bool compares =
          profile_.type == AnswerType::kYesNo || profile_.type == AnswerType::kChoice;
      // The next bridge: what this round's passages link to, else what the
      // best answer's did.
      std::string bridge;
      for (const std::vector<std::string>* list : {&ex.bridges, &best.bridges}) {
        for (const std::string& b : *list) {
          if (bridge.empty() &&
              std::find(used_bridges.begin(), used_bridges.end(), b) == used_bridges.end()) {
            bridge = b;
          }
        }
      }
      const bool covered =
          (compares || best.unmatched_terms.empty()) && best.confidence >= kOfflineAnswerConfidence;
      if (closed || covered || bridge.empty() || round + 1 == options_.max_steps) {
        answer_.steps.push_back(std::move(step));
        break;
      }
      used_bridges.push_back(bridge);
      step.follow_up = FollowUp(best, bridge);
      query = step.follow_up;
      answer_.steps.push_back(std::move(step));
    }
    std::string notes;
    for (size_t i = first_step; i < answer_.steps.size(); ++i) {
      if (!answer_.steps[i].summary.empty()) notes += answer_.steps[i].summary + "\n";
    }
    offline_read_ = best_context;
    Finish(question_, std::move(best_context), notes, &best);
    return Status::Ok();
  }

  // True when the answer's evidence (its sentence, bridge links or compared
  // options' sentences) lies in a passage about `bridge` or in one of
  // context[first_new, end).
  static bool RestsOn(const ExtractiveAnswer& ex, const std::vector<ScoredPassage>& context,
                      const std::string& bridge, size_t first_new) {
    const std::string key = EntityKey(bridge);
    if (EntityKey(ex.bridge_used) == key) return true;
    for (size_t i = 0; i < ex.evidence && i < ex.support.size(); ++i) {
      const size_t p = ex.support[i].passage;
      const std::string& title = context[p].title;
      if (p >= first_new || EntityKey(title) == key ||
          EntityKey(title.substr(0, title.find(" ("))) == key) {
        return true;
      }
    }
    return false;
  }

  // True when `ex` goes through a bridge from the very sentence `prev`
  // answered with, and that answer was not the bridge: the sentence named
  // the answer and the bridge only qualifies it ("an album DJ'ed by Jack
  // Dangers with music produced by Ben Stokes" for "Who was the DJ of the
  // album produced by a cricketer born in Christchurch?").
  static bool Reroutes(const ExtractiveAnswer& ex, const std::vector<ScoredPassage>& context,
                       const ExtractiveAnswer& prev,
                       const std::vector<ScoredPassage>& prev_context) {
    if (ex.bridge_used.empty() || prev.support.empty() || !prev.answered) return false;
    const SentenceRef& answered = prev.support.front();
    const int64_t id = prev_context[answered.passage].passage_id;
    const std::string bridge = EntityKey(ex.bridge_used);
    const std::string prev_answer = EntityKey(prev.answer);
    if (bridge == prev_answer || bridge.find(prev_answer) != std::string::npos) return false;
    for (size_t i = 1; i < ex.evidence && i < ex.support.size(); ++i) {
      const SentenceRef& link = ex.support[i];
      if (context[link.passage].passage_id == id && link.begin == answered.begin) return true;
    }
    return false;
  }

  // "<wh-word> <answer noun> <unmatched terms> <bridge>?": what the question still asks,
  // about the bridge.
  std::string FollowUp(const ExtractiveAnswer& ex, const std::string& bridge) const {
    const std::vector<std::string> bridge_terms = Tokenize(bridge);
    std::string follow = WhWord(question_);
    if (!profile_.answer_noun.empty()) follow += " " + profile_.answer_noun;
    for (const std::string& t : ex.unmatched_terms) {
      if (std::find(bridge_terms.begin(), bridge_terms.end(), t) == bridge_terms.end()) {
        follow += " " + t;
      }
    }
    return follow + " " + bridge + "?";
  }

  // The question's wh-word ("In which town ..." → "which"), else "what".
  static std::string WhWord(std::string_view question) {
    for (const std::string& w : Tokenize(question, TokenizerOptions{false, false, 64})) {
      if (w == "who" || w == "whom" || w == "whose" || w == "what" || w == "which" || w == "when" ||
          w == "where" || w == "how") {
        return w;
      }
    }
    return "what";
  }

  Status Decompose() {
    std::vector<std::string> subs;
    if (llm_ != nullptr) {
      auto r = LlmDecomposeQuery(*llm_, question_);
      if (r.ok()) {
        subs = std::move(r).value();
      } else {
        Degrade("decomposition", r.status());
      }
    }
    if (subs.empty() &&
        (profile_.type == AnswerType::kYesNo || profile_.type == AnswerType::kChoice)) {
      subs = {question_};  // compared options are not steps
    }
    if (subs.empty()) {
      // The offline splitter puts a relative clause after the clause it
      // qualifies ("... the island | island where the festival is held"):
      // answer the innermost first.
      subs = DecomposeQuery(question_);
      std::reverse(subs.begin(), subs.end());
    }
    std::string notes;
    std::string prior;  // earlier questions and answers, prepended to each retrieval
    ExtractiveAnswer last_offline;
    std::vector<ScoredPassage> last_passages;
    size_t rounds = 0;
    for (const std::string& sub : subs) {
      if (rounds > 0 && PastDeadline(rounds)) break;
      ++rounds;
      FLOWRAG_ASSIGN_OR_RETURN(RetrievalResult r, Retrieve(prior + sub));
      AnswerStep step{prior + sub, "", "", "", Ids(r.passages)};
      bool answered = false;
      if (llm_ != nullptr) {
        AnswerContext ac{Head(r.passages, options_.context_passages), r.context, notes};
        auto res = LlmAnswerQuestion(*llm_, sub, ac, "short");
        if (res.ok()) {
          step.answer = res->text;
          answered = true;
        } else {
          Degrade("sub-question " + std::to_string(rounds), res.status());
        }
      }
      if (!answered) {
        last_offline = Extract(prior + sub, Head(r.passages, options_.context_passages));
        offline_read_ = r.passages;
        last_passages = r.passages;
        step.answer = last_offline.answer;
      }
      notes += "Q: " + sub + "\nA: " + step.answer + "\n";
      prior += sub + " " + step.answer + ". ";
      answer_.steps.push_back(std::move(step));
    }
    if (subs.size() > 1 && llm_ == nullptr && !last_passages.empty()) {
      // Offline: the last sub-question's answer answers the question.
      Finish(question_, evidence_.Ordered(last_passages), notes, &last_offline);
      return Status::Ok();
    }
    FLOWRAG_ASSIGN_OR_RETURN(RetrievalResult final_r, Retrieve(question_));
    answer_.steps.push_back({question_, "", "", "", Ids(final_r.passages)});
    offline_read_.clear();
    Finish(question_, evidence_.Ordered(final_r.passages), notes, nullptr);
    return Status::Ok();
  }

  std::string question_;
  const AnswerOptions& options_;
  const PipelineDeps& deps_;
  Clock::time_point start_;
  QuestionProfile profile_;
  std::optional<UsageChat> counter_;
  ChatModel* llm_ = nullptr;
  Evidence evidence_;
  std::vector<ScoredPassage> offline_read_;  // the passages the offline answer read
  Answer answer_;
};

}  // namespace

Result<Answer> RunAnswerPipeline(std::string_view question, const AnswerOptions& options,
                                 const PipelineDeps& deps) {
  if (options.answerer == "llm" && deps.chat == nullptr) {
    return Status::FailedPrecondition(
        "answerer \"llm\" needs a chat model (EngineOptions::chat_model or ::openai_chat, or "
        "FLOWRAG_LLM_BASE_URL and FLOWRAG_LLM_MODEL)");
  }
  return Pipeline(question, options, deps).Run();
}

}  // namespace flowrag
