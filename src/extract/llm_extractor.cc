#include "extract/llm_extractor.h"

#include <algorithm>
#include <exception>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "common/text.h"
#include "lexical/names.h"
#include "llm/json_repair.h"
#include "llm/openai_common.h"

namespace flowrag {
namespace {

using Json = nlohmann::json;
using llm_internal::DescribeJson;

// An entity record as the model wrote it, before validation.
struct RawEntity {
  std::string name;
  std::string type;
  std::vector<std::string> aliases;
  std::string description;
};

// A triple as the model wrote it; `parts` should be [subject, relation, object].
struct RawTriple {
  std::vector<std::string> parts;
  std::string shown;  // the record as written, for rejection messages
};

// What one answer yields once parsed.
struct ParsedAnswer {
  std::vector<RawEntity> entities;
  std::vector<RawTriple> triples;
  std::vector<std::string> rejections;
  std::vector<std::string> repairs;
  std::vector<std::string> content_keywords;
};

std::string UpperAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

// A short quote of a JSON value for messages.
std::string Shown(const Json& v, size_t max = 100) {
  std::string s;
  try {
    s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  } catch (const std::exception&) {
    s = "?";
  }
  if (s.size() > max) {
    size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    s = s.substr(0, cut) + "...";
  }
  return s;
}

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

// A scalar as text: strings as they are, numbers written out; nullopt otherwise.
std::optional<std::string> ScalarText(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return v.dump();
  return std::nullopt;
}

const Json* FindKey(const Json& object, std::initializer_list<std::string_view> keys) {
  for (std::string_view k : keys) {
    auto it = object.find(std::string(k));
    if (it != object.end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

// The list of records in an answer: the answer itself when it is an array;
// else the first of `keys` holding an array; else the only array-valued
// member; else the object itself when it has `record_key` (one record).
Result<const Json*> FindRecordList(const Json& answer, std::initializer_list<std::string_view> keys,
                                   std::string_view record_key, Json* holder,
                                   std::vector<std::string>* repairs) {
  if (answer.is_array()) return &answer;
  std::string expected = "expected a JSON array or an object with";
  for (std::string_view k : keys) expected += " \"" + std::string(k) + "\"";
  if (!answer.is_object()) return Status::InvalidArgument(expected + ", got " + Shown(answer));
  for (std::string_view k : keys) {
    auto it = answer.find(std::string(k));
    if (it != answer.end() && it->is_array()) return &*it;
  }
  const Json* only = nullptr;
  std::string only_key;
  int arrays = 0;
  for (auto it = answer.begin(); it != answer.end(); ++it) {
    if (it.value().is_array()) {
      ++arrays;
      only = &it.value();
      only_key = it.key();
    }
  }
  if (arrays == 1) {
    AppendUnique(repairs, "read the list from key \"" + only_key + "\"");
    return only;
  }
  if (answer.contains(std::string(record_key))) {
    AppendUnique(repairs, "read a single record");
    *holder = Json::array({answer});
    return holder;
  }
  return Status::InvalidArgument(expected + ", got " + Shown(answer));
}

Status ParseEntityList(const Json& answer, ParsedAnswer* out) {
  Json holder;
  FLOWRAG_ASSIGN_OR_RETURN(const Json* list, FindRecordList(answer, {"entities", "named_entities"},
                                                            "name", &holder, &out->repairs));
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& e = (*list)[i];
    const std::string where = "entity #" + std::to_string(i + 1);
    if (e.is_string()) {
      out->entities.push_back({e.get<std::string>(), "", {}, ""});
      continue;
    }
    if (!e.is_object()) {
      out->rejections.push_back(where + " is " + DescribeJson(e) +
                                ", expected an object with \"name\" or a string: " + Shown(e));
      continue;
    }
    const Json* name = FindKey(e, {"name", "entity_name", "entity", "text"});
    std::optional<std::string> name_text = name ? ScalarText(*name) : std::nullopt;
    if (!name_text) {
      out->rejections.push_back(where + " has no string \"name\": " + Shown(e));
      continue;
    }
    RawEntity entity;
    entity.name = *name_text;
    if (const Json* type = FindKey(e, {"type", "entity_type"}); type && type->is_string()) {
      entity.type = type->get<std::string>();
    }
    if (const Json* aliases = FindKey(e, {"aliases", "alias"})) {
      if (aliases->is_string()) {
        entity.aliases.push_back(aliases->get<std::string>());
      } else if (aliases->is_array()) {
        for (const Json& a : *aliases) {
          if (std::optional<std::string> t = ScalarText(a)) {
            entity.aliases.push_back(*t);
          } else {
            AppendUnique(&out->repairs, "ignored aliases that are not strings");
          }
        }
      }
    }
    if (const Json* d = FindKey(e, {"entity_information", "description", "entity_description"})) {
      if (d->is_string()) {
        entity.description = d->get<std::string>();
      } else if (d->is_array()) {
        for (const Json& part : *d) {
          if (!part.is_string()) continue;
          if (!entity.description.empty()) entity.description += " ";
          entity.description += part.get<std::string>();
        }
        AppendUnique(&out->repairs, "joined list-valued descriptions");
      }
    }
    out->entities.push_back(std::move(entity));
  }
  return Status::Ok();
}

Status ParseTripleList(const Json& answer, ParsedAnswer* out) {
  Json holder;
  FLOWRAG_ASSIGN_OR_RETURN(
      const Json* list, FindRecordList(answer, {"triples", "relations", "relationships"}, "subject",
                                       &holder, &out->repairs));
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& t = (*list)[i];
    const std::string where = "triple #" + std::to_string(i + 1);
    RawTriple triple;
    triple.shown = Shown(t);
    if (t.is_array()) {
      bool scalars = true;
      for (const Json& part : t) {
        std::optional<std::string> s = ScalarText(part);
        scalars = scalars && s.has_value();
        triple.parts.push_back(s.value_or(""));
      }
      if (!scalars) {
        out->rejections.push_back(where + " has a part that is not a string: " + triple.shown);
        continue;
      }
    } else if (t.is_object()) {
      const Json* s = FindKey(t, {"subject", "head", "source", "entity1", "source_entity"});
      const Json* r = FindKey(t, {"relation", "predicate", "relationship", "relation_description"});
      const Json* o = FindKey(t, {"object", "tail", "target", "entity2", "target_entity"});
      std::optional<std::string> st = s ? ScalarText(*s) : std::nullopt;
      std::optional<std::string> rt = r ? ScalarText(*r) : std::nullopt;
      std::optional<std::string> ot = o ? ScalarText(*o) : std::nullopt;
      if (!st || !rt || !ot) {
        out->rejections.push_back(where +
                                  " is an object without string subject, relation and "
                                  "object: " +
                                  triple.shown);
        continue;
      }
      AppendUnique(&out->repairs, "read triples written as objects");
      triple.parts = {*st, *rt, *ot};
    } else {
      out->rejections.push_back(where + " is " + DescribeJson(t) +
                                ", expected [subject, relation, object]: " + triple.shown);
      continue;
    }
    out->triples.push_back(std::move(triple));
  }
  return Status::Ok();
}

// Word-bounded occurrences of `key` in `text_key` (" " + EntityKey(text) + " ").
int CountOccurrences(std::string_view text_key, std::string_view key) {
  if (key.empty()) return 0;
  const std::string needle = " " + std::string(key) + " ";
  int count = 0;
  for (size_t pos = text_key.find(needle); pos != std::string_view::npos;
       pos = text_key.find(needle, pos + needle.size() - 1)) {
    ++count;
  }
  return count;
}

// Mentions of an entity: word-bounded occurrences of any of its keys in
// `text_key`, longest keys first, a byte counted at most once (so "Tesla"
// inside "Nikola Tesla" is not a second mention).
int CountMentions(std::string_view text_key, std::vector<std::string> keys) {
  std::sort(keys.begin(), keys.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  std::vector<bool> covered(text_key.size(), false);
  int count = 0;
  for (const std::string& key : keys) {
    if (key.empty()) continue;
    const std::string needle = " " + key + " ";
    for (size_t pos = text_key.find(needle); pos != std::string_view::npos;
         pos = text_key.find(needle, pos + needle.size() - 1)) {
      const size_t begin = pos + 1;
      const size_t end = pos + needle.size() - 1;
      if (std::any_of(covered.begin() + begin, covered.begin() + end, [](bool c) { return c; })) {
        continue;
      }
      std::fill(covered.begin() + begin, covered.begin() + end, true);
      ++count;
    }
  }
  return count;
}

std::string_view CallName(ExtractionPromptStyle style, int call) {
  if (style == ExtractionPromptStyle::kLightRag) return "extraction";
  if (call == 0) return "NER";
  return style == ExtractionPromptStyle::kSaRag ? "relation extraction" : "triple extraction";
}

// Ratios (numerator, denominator) of TypicalCompletionTokens().
std::pair<int64_t, int64_t> TypicalRatio(ExtractionPromptStyle style, int call) {
  switch (style) {
    case ExtractionPromptStyle::kSaRag:
      return call == 0 ? std::pair<int64_t, int64_t>{1, 1} : std::pair<int64_t, int64_t>{1, 2};
    case ExtractionPromptStyle::kOpenIe:
      return call == 0 ? std::pair<int64_t, int64_t>{1, 4} : std::pair<int64_t, int64_t>{1, 1};
    case ExtractionPromptStyle::kLightRag:
      return {3, 2};
  }
  return {1, 1};
}

int64_t CeilDiv4(size_t bytes) { return static_cast<int64_t>((bytes + 3) / 4); }

int64_t RequestTokens(const ChatRequest& request) {
  size_t bytes = 0;
  for (const ChatMessage& m : request.messages) bytes += m.content.size();
  return CeilDiv4(bytes);
}

}  // namespace

// The state of one passage through a batch.
// A LightRAG answer's records as raw entities and triples.
Status ParseLightRagAnswer(std::string_view content, const LightRagFormat& format, bool truncated,
                           ParsedAnswer* parsed) {
  FLOWRAG_ASSIGN_OR_RETURN(LightRagParse records, ParseLightRagOutput(content, format, truncated));
  for (LightRagEntityRecord& e : records.entities) {
    parsed->entities.push_back(
        {std::move(e.name), std::move(e.type), {}, std::move(e.description)});
  }
  for (LightRagRelationRecord& r : records.relationships) {
    RawTriple t;
    t.shown = "(" + r.source + ", " + r.target + ", " + r.description + ")";
    t.parts = {r.source, r.description.empty() ? r.keywords : r.description, r.target};
    parsed->triples.push_back(std::move(t));
  }
  parsed->rejections = std::move(records.rejections);
  parsed->repairs = std::move(records.repairs);
  parsed->content_keywords = std::move(records.content_keywords);
  return Status::Ok();
}

// One answer of call `call` (0: entities, 1: triples) parsed into records:
// LightRAG's delimited records, else the JSON (repaired; closed when the
// answer was cut off) of an entity or triple list. An error says why the
// answer is unusable, which the format-repair request quotes: a cut-off
// answer without one complete record is unusable too.
Status ParseAnswer(ExtractionPromptStyle style, int call, const PromptOptions& prompt,
                   const ChatResponse& response, int max_tokens, ParsedAnswer* parsed) {
  const bool truncated = response.finish_reason == "length";
  if (style == ExtractionPromptStyle::kLightRag) {
    FLOWRAG_RETURN_IF_ERROR(
        ParseLightRagAnswer(response.content, prompt.lightrag, truncated, parsed));
  } else {
    JsonRepairOptions json_options;
    json_options.allow_truncated = truncated;
    FLOWRAG_ASSIGN_OR_RETURN(RepairedJson json, ParseLlmJson(response.content, json_options));
    parsed->repairs = json.repairs;
    FLOWRAG_RETURN_IF_ERROR(call == 0 ? ParseEntityList(json.value, parsed)
                                      : ParseTripleList(json.value, parsed));
  }
  if (truncated && parsed->entities.empty() && parsed->triples.empty()) {
    return Status::InvalidArgument("the answer was cut off by the token limit (max_tokens " +
                                   std::to_string(max_tokens) +
                                   ") before its first complete record");
  }
  return Status::Ok();
}

struct LlmExtractor::Work {
  const ExtractionInput* input = nullptr;
  PassageOutcome* outcome = nullptr;
  bool failed = false;
  bool transport_failure = false;  // the first call failed in the client
  std::string text_key;            // " " + EntityKey(title + " " + text) + " "
  std::vector<RawEntity> raw_entities;
  std::vector<RawTriple> raw_triples;
  std::vector<ExtractedEntity> entities;              // merged
  std::unordered_map<std::string, size_t> key_index;  // name and alias keys -> entities[]
};

int64_t TypicalCompletionTokens(ExtractionPromptStyle style, int call, int64_t passage_tokens,
                                int max_tokens) {
  const auto [num, den] = TypicalRatio(style, call);
  const int64_t typical = (passage_tokens * num + den - 1) / den;
  return std::min<int64_t>(typical, std::max(max_tokens, 0));
}

DryRunEstimate EstimateCost(std::span<const ExtractionInput> passages,
                            const LlmExtractorOptions& options) {
  DryRunEstimate estimate;
  const StylePlan plan = PlanFor(options.style, options.prompt);
  for (const ExtractionInput& p : passages) {
    ++estimate.passages;
    const int64_t passage_tokens = CeilDiv4(RenderPassage(p.title, p.text).size());
    const ChatRequest first = BuildFirstRequest(options.style, p.title, p.text, options.prompt);
    const int64_t first_typical =
        TypicalCompletionTokens(options.style, 0, passage_tokens, plan.first_max_tokens);
    estimate.calls += 1;
    estimate.prompt_tokens += RequestTokens(first);
    estimate.completion_tokens_max += plan.first_max_tokens;
    estimate.completion_tokens_typical += first_typical;
    if (plan.calls_per_passage < 2) continue;
    const ChatRequest second =
        BuildSecondRequest(options.style, p.title, p.text, {}, options.prompt);
    estimate.calls += 1;
    estimate.prompt_tokens += RequestTokens(second) + first_typical;
    estimate.completion_tokens_max += plan.second_max_tokens;
    estimate.completion_tokens_typical +=
        TypicalCompletionTokens(options.style, 1, passage_tokens, plan.second_max_tokens);
  }
  return estimate;
}

Result<std::unique_ptr<LlmExtractor>> LlmExtractor::Create(ChatModel* model,
                                                           LlmExtractorOptions options) {
  if (model == nullptr) return Status::InvalidArgument("LlmExtractor: model is null");
  if (options.batch_size == 0) {
    return Status::InvalidArgument("LlmExtractorOptions.batch_size: expected >= 1, got 0");
  }
  if (options.format_repair_turns < 0) {
    return Status::InvalidArgument("LlmExtractorOptions.format_repair_turns: expected >= 0, got " +
                                   std::to_string(options.format_repair_turns));
  }
  if (options.max_name_bytes == 0 || options.max_relation_bytes == 0) {
    return Status::InvalidArgument(
        "LlmExtractorOptions.max_name_bytes and max_relation_bytes: expected >= 1");
  }
  if (options.prompt.first_max_tokens < 0 || options.prompt.second_max_tokens < 0) {
    return Status::InvalidArgument(
        "LlmExtractorOptions.prompt token budgets: expected >= 1, or 0 for the style's default");
  }
  if (!(options.prompt.temperature >= 0.0)) {
    return Status::InvalidArgument("LlmExtractorOptions.prompt.temperature: expected >= 0");
  }
  if (options.style == ExtractionPromptStyle::kLightRag &&
      options.prompt.lightrag.tuple_delimiter.empty()) {
    return Status::InvalidArgument(
        "LlmExtractorOptions.prompt.lightrag.tuple_delimiter: expected a non-empty delimiter");
  }
  return std::unique_ptr<LlmExtractor>(new LlmExtractor(model, std::move(options)));
}

LlmExtractor::LlmExtractor(ChatModel* model, LlmExtractorOptions options)
    : model_(model), options_(std::move(options)) {}

void LlmExtractor::Log(const PassageOutcome& outcome, std::string_view line) const {
  if (!options_.log) return;
  options_.log("passage " + std::to_string(outcome.passage_id) + ": " + std::string(line));
}

Result<std::vector<PassageOutcome>> LlmExtractor::Extract(
    std::span<const ExtractionInput> passages) {
  std::unordered_set<int64_t> ids;
  for (const ExtractionInput& p : passages) {
    if (!ids.insert(p.passage_id).second) {
      return Status::InvalidArgument("LlmExtractor::Extract: passage_id " +
                                     std::to_string(p.passage_id) + " appears twice");
    }
  }
  std::vector<PassageOutcome> outcomes(passages.size());
  for (size_t i = 0; i < passages.size(); ++i) {
    outcomes[i].passage_id = passages[i].passage_id;
    outcomes[i].extraction.passage_id = passages[i].passage_id;
  }
  std::optional<Status> stopped;
  for (size_t begin = 0; begin < passages.size(); begin += options_.batch_size) {
    const size_t end = std::min(passages.size(), begin + options_.batch_size);
    std::span<PassageOutcome> batch_outcomes(outcomes.data() + begin, end - begin);
    if (stopped) {
      for (PassageOutcome& o : batch_outcomes) {
        o.status = *stopped;
        Log(o, o.status.ToString());
      }
      continue;
    }
    const bool all_failed = RunBatch(passages.subspan(begin, end - begin), batch_outcomes);
    if (all_failed && options_.stop_after_failed_batch && end - begin >= 2) {
      stopped = Status::Unavailable("not attempted: every call of an earlier batch failed (" +
                                    batch_outcomes.front().status.message() + ")");
    }
  }
  return outcomes;
}

void LlmExtractor::Fail(Work& w, Status status) {
  if (w.failed) return;
  w.failed = true;
  w.outcome->status = std::move(status);
}

bool LlmExtractor::RunBatch(std::span<const ExtractionInput> passages,
                            std::span<PassageOutcome> outcomes) {
  std::vector<Work> work(passages.size());
  for (size_t i = 0; i < passages.size(); ++i) {
    work[i].input = &passages[i];
    work[i].outcome = &outcomes[i];
    work[i].text_key = " " + EntityKey(passages[i].title + " " + passages[i].text) + " ";
  }
  const StylePlan plan = PlanFor(options_.style, options_.prompt);
  RunCall(work, 0);
  if (plan.calls_per_passage >= 2) {
    // Merge the NER entities first: call 2 is given their primary names.
    for (Work& w : work) {
      if (!w.failed) Finish(w);
    }
    RunCall(work, 1);
  }
  bool all_failed = !work.empty();
  for (Work& w : work) {
    all_failed = all_failed && w.transport_failure;
    if (!w.failed) Finish(w);
    PassageOutcome& o = *w.outcome;
    if (w.failed) {
      o.extraction = PassageExtraction{};
      o.extraction.passage_id = o.passage_id;
      Log(o, o.status.ToString());
    } else {
      o.extraction.entities = std::move(w.entities);
    }
  }
  return all_failed;
}

// One call (0 or 1) for every passage of a batch that has not failed, in
// turns: the first sends every request; each later turn asks again, with a
// format-repair request, only for the answers that were unusable (up to
// format_repair_turns turns). One use.
class LlmExtractor::CallRound {
 public:
  CallRound(const LlmExtractor& extractor, std::vector<Work>& work, int call)
      : x_(extractor),
        work_(work),
        call_(call),
        call_name_(CallName(extractor.options_.style, call)) {}

  void Run() {
    BuildRequests();
    for (int turn = 0; !requests_.empty(); ++turn) {
      std::vector<Result<ChatResponse>> results = x_.model_->CompleteBatch(requests_);
      std::vector<size_t> next_index;
      std::vector<ChatRequest> next_requests;
      for (size_t k = 0; k < index_.size(); ++k) {
        Work& w = work_[index_[k]];
        ++w.outcome->calls;
        if (k >= results.size() || !results[k].ok()) {
          FailCall(w,
                   k < results.size()
                       ? results[k].status()
                       : Status::Internal("the model returned fewer results than requests"),
                   turn);
          continue;
        }
        const ChatResponse& response = results[k].value();
        CountTokens(response, w.outcome);
        ParsedAnswer parsed;
        const Status st = ParseAnswer(x_.options_.style, call_, x_.options_.prompt, response,
                                      requests_[k].max_tokens, &parsed);
        if (st.ok()) {
          Absorb(std::move(parsed), response.finish_reason == "length", w);
        } else if (turn < x_.options_.format_repair_turns) {
          AppendUnique(&w.outcome->repairs,
                       "asked again after an unusable " + call_name_ + " answer");
          next_requests.push_back(BuildFormatRepairRequest(
              x_.options_.style, requests_[k], response.content, st.message(), x_.options_.prompt));
          next_index.push_back(index_[k]);
        } else {
          FailUnusable(w, st, turn);
        }
      }
      index_ = std::move(next_index);
      requests_ = std::move(next_requests);
    }
  }

 private:
  // The first turn's requests: call 0 for every passage; call 1 for those
  // with entities (or all, when triples may add their endpoints), given the
  // entities' primary names.
  void BuildRequests() {
    const LlmExtractorOptions& o = x_.options_;
    for (size_t i = 0; i < work_.size(); ++i) {
      Work& w = work_[i];
      if (w.failed) continue;
      if (call_ == 0) {
        requests_.push_back(BuildFirstRequest(o.style, w.input->title, w.input->text, o.prompt));
      } else {
        if (w.entities.empty() && !o.add_missing_triple_entities) continue;
        std::vector<std::string> names;
        names.reserve(w.entities.size());
        for (const ExtractedEntity& e : w.entities) names.push_back(e.name);
        requests_.push_back(
            BuildSecondRequest(o.style, w.input->title, w.input->text, names, o.prompt));
      }
      index_.push_back(i);
    }
  }

  // The client failed: the passage fails (a first request of call 0 that
  // fails counts as a transport failure of the batch).
  void FailCall(Work& w, const Status& st, int turn) {
    if (call_ == 0 && turn == 0) w.transport_failure = true;
    Fail(w, st.WithContext("passage " + std::to_string(w.outcome->passage_id) + ": " + call_name_ +
                           " call"));
  }

  // The answer is unusable and no format-repair turn is left.
  void FailUnusable(Work& w, const Status& st, int turn) {
    Fail(w,
         Status::Unavailable("passage " + std::to_string(w.outcome->passage_id) + ": " +
                             call_name_ + " answer unusable" +
                             (turn > 0 ? " after " + std::to_string(turn) + " follow-up request(s)"
                                       : std::string()) +
                             ": " + st.message()));
  }

  static void CountTokens(const ChatResponse& response, PassageOutcome* o) {
    o->prompt_tokens += response.prompt_tokens;
    o->completion_tokens += response.completion_tokens;
    if (response.from_cache) ++o->cache_hits;
  }

  // A usable answer: its repairs and rejections are recorded, its records
  // kept for Finish.
  void Absorb(ParsedAnswer parsed, bool truncated, Work& w) {
    PassageOutcome& o = *w.outcome;
    o.truncated = o.truncated || truncated;
    if (truncated) {
      AppendUnique(&o.repairs, "repaired a " + call_name_ + " answer cut off by the token limit");
    }
    for (std::string& r : parsed.repairs) AppendUnique(&o.repairs, std::move(r));
    for (std::string& r : parsed.rejections) {
      r = call_name_ + " answer: " + r;
      x_.Log(o, "rejected: " + r);
      o.rejections.push_back(std::move(r));
    }
    for (std::string& kw : parsed.content_keywords) o.content_keywords.push_back(std::move(kw));
    for (RawEntity& e : parsed.entities) w.raw_entities.push_back(std::move(e));
    for (RawTriple& t : parsed.triples) w.raw_triples.push_back(std::move(t));
  }

  const LlmExtractor& x_;
  std::vector<Work>& work_;
  const int call_;
  const std::string call_name_;
  std::vector<size_t> index_;  // work_ index of each request
  std::vector<ChatRequest> requests_;
};

void LlmExtractor::RunCall(std::vector<Work>& work, int call) {
  CallRound(*this, work, call).Run();
}

// Validates one passage's raw records and merges them into its
// extraction: entities first (records that share a name or alias key
// become one entity), then the triples between them, then each entity's
// mention count. Every record left out is a rejection with its reason.
class LlmExtractor::RecordMerge {
 public:
  RecordMerge(const LlmExtractor& extractor, Work& w)
      : x_(extractor), o_(extractor.options_), w_(w) {}

  void Run() {
    for (const RawEntity& raw : w_.raw_entities) AddEntity(raw);
    w_.raw_entities.clear();
    for (const RawTriple& raw : w_.raw_triples) AddTriple(raw);
    w_.raw_triples.clear();
    for (ExtractedEntity& e : w_.entities) {
      std::vector<std::string> keys = {EntityKey(e.name)};
      for (const std::string& a : e.aliases) keys.push_back(EntityKey(a));
      e.count = std::max(CountMentions(w_.text_key, std::move(keys)), 1);
      e.defining = true;
    }
  }

 private:
  using NameKeys = std::vector<std::pair<std::string, std::string>>;  // (name, key)

  void Reject(std::string reason) {
    x_.Log(*w_.outcome, "rejected: " + reason);
    w_.outcome->rejections.push_back(std::move(reason));
  }

  // The record's name and aliases with their keys, the name first; none
  // (rejected) when the name is empty, too long or without a letter or
  // digit, or when require_entities_in_text and none occurs in the passage.
  std::optional<NameKeys> ValidNames(const RawEntity& raw) {
    const std::string name = CollapseSpaces(raw.name);
    if (name.empty()) {
      Reject("entity with an empty name");
      return std::nullopt;
    }
    if (name.size() > o_.max_name_bytes) {
      Reject("entity name longer than " + std::to_string(o_.max_name_bytes) +
             " bytes: " + Quoted(name.substr(0, 60)) + "...");
      return std::nullopt;
    }
    const std::string key = EntityKey(name);
    if (key.empty()) {
      Reject("entity " + Quoted(name) + " has no letter or digit");
      return std::nullopt;
    }
    NameKeys names = {{name, key}};
    for (const std::string& alias_raw : raw.aliases) {
      const std::string alias = CollapseSpaces(alias_raw);
      const std::string alias_key = EntityKey(alias);
      if (alias_key.empty() || alias.size() > o_.max_name_bytes) continue;
      names.emplace_back(alias, alias_key);
    }
    if (o_.require_entities_in_text) {
      bool found = false;
      for (const auto& [n, k] : names) found = found || CountOccurrences(w_.text_key, k) > 0;
      if (!found) {
        Reject("entity " + Quoted(name) + " does not occur in the passage");
        return std::nullopt;
      }
    }
    return names;
  }

  void AddEntity(const RawEntity& raw) {
    const std::optional<NameKeys> names = ValidNames(raw);
    if (!names) return;
    size_t target = w_.entities.size();
    for (const auto& [n, k] : *names) {
      auto it = w_.key_index.find(k);
      if (it != w_.key_index.end()) {
        target = it->second;
        break;
      }
    }
    const std::string type = UpperAscii(CollapseSpaces(raw.type)).substr(0, 64);
    const std::string description = CollapseSpaces(raw.description);
    if (target == w_.entities.size()) {
      ExtractedEntity entity;
      entity.name = names->front().first;
      entity.type = type;
      entity.description = description;
      w_.entities.push_back(std::move(entity));
    } else {
      MergeDescription(type, description, &w_.entities[target]);
    }
    AddNames(*names, target);
  }

  // A second record of an entity: its type when the entity has none, its
  // description appended when new.
  static void MergeDescription(const std::string& type, const std::string& description,
                               ExtractedEntity* e) {
    if (e->type.empty()) e->type = type;
    if (description.empty() || e->description.find(description) != std::string::npos) return;
    if (!e->description.empty()) {
      const char last = e->description.back();
      e->description += (last == '.' || last == '!' || last == '?') ? " " : "; ";
    }
    e->description += description;
  }

  // Every name's key leads to the entity; names other than its primary one
  // are its aliases.
  void AddNames(const NameKeys& names, size_t target) {
    ExtractedEntity& e = w_.entities[target];
    const std::string primary_key = EntityKey(e.name);
    for (const auto& name_key : names) {
      // Not a structured binding: clang before 16 cannot capture one in a lambda.
      const auto& n = name_key.first;
      const auto& k = name_key.second;
      w_.key_index.emplace(k, target);
      if (k == primary_key) continue;
      const bool known = std::any_of(e.aliases.begin(), e.aliases.end(),
                                     [&](const std::string& a) { return EntityKey(a) == k; });
      if (!known) e.aliases.push_back(n);
    }
  }

  // The entity an endpoint names; with add_missing_triple_entities a new
  // entity for a name that is none yet.
  std::optional<size_t> ResolveEndpoint(const std::string& endpoint) {
    const std::string key = EntityKey(endpoint);
    auto it = w_.key_index.find(key);
    if (it != w_.key_index.end()) return it->second;
    if (!o_.add_missing_triple_entities || key.empty() || endpoint.size() > o_.max_name_bytes) {
      return std::nullopt;
    }
    ExtractedEntity entity;
    entity.name = endpoint;
    w_.entities.push_back(std::move(entity));
    w_.key_index.emplace(key, w_.entities.size() - 1);
    return w_.entities.size() - 1;
  }

  // A triple: three non-empty parts whose endpoints are extracted entities,
  // two different ones; the same (subject, relation, object) once.
  void AddTriple(const RawTriple& raw) {
    if (raw.parts.size() != 3) {
      Reject("triple with " + std::to_string(raw.parts.size()) +
             " parts, expected [subject, relation, object]: " + raw.shown);
      return;
    }
    const std::string subject = CollapseSpaces(raw.parts[0]);
    const std::string relation = CollapseSpaces(raw.parts[1]);
    const std::string object = CollapseSpaces(raw.parts[2]);
    if (subject.empty() || relation.empty() || object.empty()) {
      Reject(std::string("triple with an empty ") +
             (subject.empty()    ? "subject"
              : relation.empty() ? "relation"
                                 : "object") +
             ": " + raw.shown);
      return;
    }
    if (relation.size() > o_.max_relation_bytes) {
      Reject("triple relation longer than " + std::to_string(o_.max_relation_bytes) +
             " bytes: " + raw.shown);
      return;
    }
    const std::optional<size_t> s = ResolveEndpoint(subject);
    const std::optional<size_t> t = ResolveEndpoint(object);
    const std::string shown = "triple [" + subject + " | " + relation + " | " + object + "]: ";
    if (!s || !t) {
      std::string which;
      if (!s) which = "subject " + Quoted(subject);
      if (!t) which += std::string(which.empty() ? "" : " and ") + "object " + Quoted(object);
      Reject(shown + which +
             (!s && !t ? " are not extracted entities" : " is not an extracted entity"));
      return;
    }
    if (*s == *t) {
      Reject(shown + "subject and object are the same entity");
      return;
    }
    if (!seen_.emplace(*s, ToLowerAscii(relation), *t).second) return;
    w_.outcome->extraction.triples.push_back(
        {w_.entities[*s].name, relation, w_.entities[*t].name});
  }

  const LlmExtractor& x_;
  const LlmExtractorOptions& o_;
  Work& w_;
  std::set<std::tuple<size_t, std::string, size_t>> seen_;  // triples kept
};

void LlmExtractor::Finish(Work& w) { RecordMerge(*this, w).Run(); }

}  // namespace flowrag
