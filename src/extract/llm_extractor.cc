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
#include "extract/json_repair.h"
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

// Trims and collapses every run of ASCII whitespace to one space.
std::string CollapseSpace(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      space = !out.empty();
    } else {
      if (space) out += ' ';
      space = false;
      out += c;
    }
  }
  return out;
}

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

void LlmExtractor::RunCall(std::vector<Work>& work, int call) {
  const ExtractionPromptStyle style = options_.style;
  std::vector<size_t> index;
  std::vector<ChatRequest> requests;
  for (size_t i = 0; i < work.size(); ++i) {
    Work& w = work[i];
    if (w.failed) continue;
    if (call == 0) {
      requests.push_back(BuildFirstRequest(style, w.input->title, w.input->text, options_.prompt));
    } else {
      if (w.entities.empty() && !options_.add_missing_triple_entities) continue;
      std::vector<std::string> names;
      names.reserve(w.entities.size());
      for (const ExtractedEntity& e : w.entities) names.push_back(e.name);
      requests.push_back(
          BuildSecondRequest(style, w.input->title, w.input->text, names, options_.prompt));
    }
    index.push_back(i);
  }
  const std::string call_name(CallName(style, call));
  for (int turn = 0; !requests.empty(); ++turn) {
    std::vector<Result<ChatResponse>> results = model_->CompleteBatch(requests);
    std::vector<size_t> next_index;
    std::vector<ChatRequest> next_requests;
    for (size_t k = 0; k < index.size(); ++k) {
      Work& w = work[index[k]];
      PassageOutcome& o = *w.outcome;
      ++o.calls;
      if (k >= results.size() || !results[k].ok()) {
        const Status st = k < results.size()
                              ? results[k].status()
                              : Status::Internal("the model returned fewer results than requests");
        if (call == 0 && turn == 0) w.transport_failure = true;
        Fail(w, st.WithContext("passage " + std::to_string(o.passage_id) + ": " + call_name +
                               " call"));
        continue;
      }
      const ChatResponse& response = results[k].value();
      o.prompt_tokens += response.prompt_tokens;
      o.completion_tokens += response.completion_tokens;
      if (response.from_cache) ++o.cache_hits;
      const bool truncated = response.finish_reason == "length";

      ParsedAnswer parsed;
      Status st;
      if (style == ExtractionPromptStyle::kLightRag) {
        Result<LightRagParse> records =
            ParseLightRagOutput(response.content, options_.prompt.lightrag, truncated);
        if (records.ok()) {
          for (LightRagEntityRecord& e : records->entities) {
            parsed.entities.push_back(
                {std::move(e.name), std::move(e.type), {}, std::move(e.description)});
          }
          for (LightRagRelationRecord& r : records->relationships) {
            RawTriple t;
            t.shown = "(" + r.source + ", " + r.target + ", " + r.description + ")";
            t.parts = {r.source, r.description.empty() ? r.keywords : r.description, r.target};
            parsed.triples.push_back(std::move(t));
          }
          parsed.rejections = std::move(records->rejections);
          parsed.repairs = std::move(records->repairs);
          parsed.content_keywords = std::move(records->content_keywords);
        } else {
          st = records.status();
        }
      } else {
        JsonRepairOptions json_options;
        json_options.allow_truncated = truncated;
        Result<RepairedJson> json = ParseLlmJson(response.content, json_options);
        if (json.ok()) {
          parsed.repairs = json->repairs;
          st = call == 0 ? ParseEntityList(json->value, &parsed)
                         : ParseTripleList(json->value, &parsed);
        } else {
          st = json.status();
        }
      }
      if (st.ok() && truncated && parsed.entities.empty() && parsed.triples.empty()) {
        st = Status::InvalidArgument("the answer was cut off by the token limit (max_tokens " +
                                     std::to_string(requests[k].max_tokens) +
                                     ") before its first complete record");
      }
      if (!st.ok()) {
        if (turn < options_.format_repair_turns) {
          AppendUnique(&o.repairs, "asked again after an unusable " + call_name + " answer");
          next_requests.push_back(BuildFormatRepairRequest(style, requests[k], response.content,
                                                           st.message(), options_.prompt));
          next_index.push_back(index[k]);
        } else {
          Fail(w, Status::Unavailable(
                      "passage " + std::to_string(o.passage_id) + ": " + call_name +
                      " answer unusable" +
                      (turn > 0 ? " after " + std::to_string(turn) + " follow-up request(s)"
                                : std::string()) +
                      ": " + st.message()));
        }
        continue;
      }
      o.truncated = o.truncated || truncated;
      if (truncated)
        AppendUnique(&o.repairs, "repaired a " + call_name + " answer cut off by the token limit");
      for (std::string& r : parsed.repairs) AppendUnique(&o.repairs, std::move(r));
      for (std::string& r : parsed.rejections) {
        r = call_name + " answer: " + r;
        Log(o, "rejected: " + r);
        o.rejections.push_back(std::move(r));
      }
      for (std::string& kw : parsed.content_keywords) o.content_keywords.push_back(std::move(kw));
      for (RawEntity& e : parsed.entities) w.raw_entities.push_back(std::move(e));
      for (RawTriple& t : parsed.triples) w.raw_triples.push_back(std::move(t));
    }
    index = std::move(next_index);
    requests = std::move(next_requests);
  }
}

void LlmExtractor::Finish(Work& w) {
  PassageOutcome& o = *w.outcome;
  auto reject = [&](std::string reason) {
    Log(o, "rejected: " + reason);
    o.rejections.push_back(std::move(reason));
  };

  // Entities: validate, then merge records that share a name or alias key.
  for (size_t i = 0; i < w.raw_entities.size(); ++i) {
    RawEntity& raw = w.raw_entities[i];
    const std::string name = CollapseSpace(raw.name);
    if (name.empty()) {
      reject("entity with an empty name");
      continue;
    }
    if (name.size() > options_.max_name_bytes) {
      reject("entity name longer than " + std::to_string(options_.max_name_bytes) +
             " bytes: " + Quoted(name.substr(0, 60)) + "...");
      continue;
    }
    const std::string key = EntityKey(name);
    if (key.empty()) {
      reject("entity " + Quoted(name) + " has no letter or digit");
      continue;
    }
    std::vector<std::pair<std::string, std::string>> names = {{name, key}};  // (name, key)
    for (const std::string& alias_raw : raw.aliases) {
      const std::string alias = CollapseSpace(alias_raw);
      const std::string alias_key = EntityKey(alias);
      if (alias_key.empty() || alias.size() > options_.max_name_bytes) continue;
      names.emplace_back(alias, alias_key);
    }
    if (options_.require_entities_in_text) {
      bool found = false;
      for (const auto& [n, k] : names) found = found || CountOccurrences(w.text_key, k) > 0;
      if (!found) {
        reject("entity " + Quoted(name) + " does not occur in the passage");
        continue;
      }
    }
    size_t target = w.entities.size();
    for (const auto& [n, k] : names) {
      auto it = w.key_index.find(k);
      if (it != w.key_index.end()) {
        target = it->second;
        break;
      }
    }
    const std::string type = UpperAscii(CollapseSpace(raw.type)).substr(0, 64);
    const std::string description = CollapseSpace(raw.description);
    if (target == w.entities.size()) {
      ExtractedEntity entity;
      entity.name = name;
      entity.type = type;
      entity.description = description;
      w.entities.push_back(std::move(entity));
    } else {
      ExtractedEntity& e = w.entities[target];
      if (e.type.empty()) e.type = type;
      if (!description.empty() && e.description.find(description) == std::string::npos) {
        if (!e.description.empty()) {
          const char last = e.description.back();
          e.description += (last == '.' || last == '!' || last == '?') ? " " : "; ";
        }
        e.description += description;
      }
    }
    ExtractedEntity& e = w.entities[target];
    const std::string primary_key = EntityKey(e.name);
    for (const auto& name_key : names) {
      // Not a structured binding: clang before 16 cannot capture one in a lambda.
      const auto& n = name_key.first;
      const auto& k = name_key.second;
      w.key_index.emplace(k, target);
      if (k == primary_key) continue;
      const bool known = std::any_of(e.aliases.begin(), e.aliases.end(),
                                     [&](const std::string& a) { return EntityKey(a) == k; });
      if (!known) e.aliases.push_back(n);
    }
  }
  w.raw_entities.clear();

  // Triples: three non-empty parts whose endpoints are extracted entities.
  std::set<std::tuple<size_t, std::string, size_t>> seen;
  for (size_t i = 0; i < w.raw_triples.size(); ++i) {
    const RawTriple& raw = w.raw_triples[i];
    if (raw.parts.size() != 3) {
      reject("triple with " + std::to_string(raw.parts.size()) +
             " parts, expected [subject, relation, object]: " + raw.shown);
      continue;
    }
    const std::string subject = CollapseSpace(raw.parts[0]);
    const std::string relation = CollapseSpace(raw.parts[1]);
    const std::string object = CollapseSpace(raw.parts[2]);
    if (subject.empty() || relation.empty() || object.empty()) {
      reject(std::string("triple with an empty ") +
             (subject.empty()    ? "subject"
              : relation.empty() ? "relation"
                                 : "object") +
             ": " + raw.shown);
      continue;
    }
    if (relation.size() > options_.max_relation_bytes) {
      reject("triple relation longer than " + std::to_string(options_.max_relation_bytes) +
             " bytes: " + raw.shown);
      continue;
    }
    auto resolve = [&](const std::string& endpoint) -> std::optional<size_t> {
      const std::string key = EntityKey(endpoint);
      auto it = w.key_index.find(key);
      if (it != w.key_index.end()) return it->second;
      if (!options_.add_missing_triple_entities || key.empty() ||
          endpoint.size() > options_.max_name_bytes) {
        return std::nullopt;
      }
      ExtractedEntity entity;
      entity.name = endpoint;
      w.entities.push_back(std::move(entity));
      w.key_index.emplace(key, w.entities.size() - 1);
      return w.entities.size() - 1;
    };
    const std::optional<size_t> s = resolve(subject);
    const std::optional<size_t> t = resolve(object);
    if (!s || !t) {
      std::string which;
      if (!s) which = "subject " + Quoted(subject);
      if (!t) which += std::string(which.empty() ? "" : " and ") + "object " + Quoted(object);
      reject("triple [" + subject + " | " + relation + " | " + object + "]: " + which +
             (!s && !t ? " are not extracted entities" : " is not an extracted entity"));
      continue;
    }
    if (*s == *t) {
      reject("triple [" + subject + " | " + relation + " | " + object +
             "]: subject and object are the same entity");
      continue;
    }
    if (!seen.emplace(*s, ToLowerAscii(relation), *t).second) continue;
    o.extraction.triples.push_back({w.entities[*s].name, relation, w.entities[*t].name});
  }
  w.raw_triples.clear();

  for (ExtractedEntity& e : w.entities) {
    std::vector<std::string> keys = {EntityKey(e.name)};
    for (const std::string& a : e.aliases) keys.push_back(EntityKey(a));
    e.count = std::max(CountMentions(w.text_key, std::move(keys)), 1);
    e.defining = true;
  }
}

}  // namespace flowrag
