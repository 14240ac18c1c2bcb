#include "schema/llm_discovery.h"

#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "llm/json_repair.h"
#include "schema/discovery.h"
#include "schema/discovery_prompts.h"
#include "schema/exclusions.h"
#include "schema/matched_samples.h"
#include "schema/proposal_merge.h"
#include "schema/samples.h"

namespace flowrag {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

Status CheckOptions(const LlmDiscoveryOptions& o) {
  auto bad = [](const std::string& field, const std::string& expected, const std::string& got) {
    return Status::InvalidArgument("LlmDiscoveryOptions." + field + ": expected " + expected +
                                   ", got " + got);
  };
  if (o.chars_per_token < 1) return bad("chars_per_token", ">= 1", "0");
  if (o.max_value_bytes < 16) {
    return bad("max_value_bytes", ">= 16", std::to_string(o.max_value_bytes));
  }
  if (o.max_tokens < 1) return bad("max_tokens", ">= 1", std::to_string(o.max_tokens));
  if (!std::isfinite(o.temperature) || o.temperature < 0) {
    return bad("temperature", "a finite number >= 0", std::to_string(o.temperature));
  }
  if (o.format_repair_turns < 0) {
    return bad("format_repair_turns", ">= 0", std::to_string(o.format_repair_turns));
  }
  return Status::Ok();
}

// One source's records as discovery reads them, and its quoted blocks, r*
// first.
struct SourceSamples {
  const SourceInfo* info = nullptr;
  std::vector<FlatRecord> records;
  std::set<std::string> paths;  // catalog paths: what may be quoted
  std::vector<std::string> blocks;
};

// The records of every source of `schema`, read again from `dir`.
Result<std::vector<SourceSamples>> ReadSamples(const InducedSchema& schema, const std::string& dir,
                                               const LlmDiscoveryOptions& o) {
  Exclusions exclusions;
  std::string manifest = o.exclusions;
  if (manifest.empty() && fs::exists(fs::path(dir) / "flowrag_exclude.yaml")) {
    manifest = (fs::path(dir) / "flowrag_exclude.yaml").string();
  }
  if (!manifest.empty()) {
    FLOWRAG_ASSIGN_OR_RETURN(exclusions, LoadExclusions(manifest));
  }
  std::vector<std::string> excluded;
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<DiscoveredSource> found,
                           DiscoverSources(dir, exclusions, DiscoveryOptions{}, &excluded));
  std::map<std::string, const DiscoveredSource*> by_name;
  for (const DiscoveredSource& d : found) by_name[d.name] = &d;
  std::vector<SourceSamples> out;
  for (const SourceInfo& s : schema.sources) {
    auto it = by_name.find(s.name);
    if (it == by_name.end()) {
      return Status::FailedPrecondition(dir + ": source \"" + s.name +
                                        "\" of the schema is not there any more; induce the "
                                        "schema again");
    }
    SourceSamples source;
    source.info = &s;
    std::vector<std::string> columns;
    size_t transcoded = 0;
    FLOWRAG_ASSIGN_OR_RETURN(source.records,
                             LoadSourceRecords(*it->second, dir, &columns, &transcoded));
    const std::vector<FlatRecord>& records = source.records;
    if (static_cast<int64_t>(records.size()) != s.records) {
      return Status::FailedPrecondition((s.path.empty() ? s.name : s.path) + ": " +
                                        std::to_string(records.size()) +
                                        " records, the schema was induced over " +
                                        std::to_string(s.records) + "; induce the schema again");
    }
    for (const FieldInfo& f : schema.fields) {
      if (f.source == s.name) source.paths.insert(f.path);
    }
    // A schema read back from YAML has no sample choice: make it now.
    long representative = s.representative;
    std::vector<size_t> samples = s.samples;
    if (representative < 0 && samples.empty()) {
      representative = RepresentativeRecord(records);
      samples = DiverseSamples(records, representative);
    }
    if (representative >= 0 && static_cast<size_t>(representative) < records.size()) {
      const size_t r = static_cast<size_t>(representative);
      source.blocks.push_back(RenderSampleRecord(s, r, records[r], "representative", source.paths,
                                                 o.max_value_bytes));
    }
    for (size_t i : samples) {
      if (i >= records.size() || static_cast<long>(i) == representative) continue;
      source.blocks.push_back(
          RenderSampleRecord(s, i, records[i], "sample", source.paths, o.max_value_bytes));
    }
    out.push_back(std::move(source));
  }
  return out;
}

// A.8.1: for every foreign key, the records of both sources that share a
// link-key value (Algorithm 2, `matched_values` values each), quoted while
// `matched_sample_tokens` last; the first key's sets before the second's.
std::string MatchedBlocks(const InducedSchema& schema, const std::vector<SourceSamples>& sources,
                          const LlmDiscoveryOptions& o, size_t* sets) {
  std::map<std::string, const SourceSamples*> by_name;
  for (const SourceSamples& s : sources) by_name[s.info->name] = &s;
  const size_t budget = o.matched_sample_tokens * o.chars_per_token;
  constexpr size_t kRecordsPerSide = 3;
  auto quote = [&](const SourceSamples& s, const std::vector<size_t>& records) {
    std::string out;
    for (size_t k = 0; k < records.size() && k < kRecordsPerSide; ++k) {
      out += RenderSampleRecord(*s.info, records[k], s.records[records[k]], "matched", s.paths,
                                o.max_value_bytes);
    }
    if (records.size() > kRecordsPerSide) {
      out += "(+" + std::to_string(records.size() - kRecordsPerSide) + " more records of \"" +
             s.info->name + "\" with this value)\n";
    }
    return out;
  };
  std::string out;
  for (const ForeignKey& fk : schema.foreign_keys) {
    auto from = by_name.find(fk.from_source), to = by_name.find(fk.to_source);
    if (from == by_name.end() || to == by_name.end()) continue;
    for (const MatchedSet& m :
         MatchedSampling(fk, from->second->records, to->second->records, o.matched_values)) {
      const std::string block =
          "=== " + fk.from_source + "." + fk.from_field + " = " + fk.to_source + "." + fk.to_field +
          " = " + Json(m.value).dump() + ": " + std::to_string(m.from_records.size()) +
          " record(s) of \"" + fk.from_source + "\", " + std::to_string(m.to_records.size()) +
          " of \"" + fk.to_source + "\"\n" + quote(*from->second, m.from_records) +
          quote(*to->second, m.to_records);
      if (out.size() + block.size() > budget) return out;
      out += block;
      ++*sets;
    }
  }
  return out;
}

// Sends `request`, parses the answer with `read` (on tolerant JSON), and asks
// again up to `turns` times while the answer is unusable.
Status RunPass(ChatModel& chat, ChatRequest request, const std::string& pass, int turns,
               const std::function<Status(const Json&)>& read, LlmPassReport* report) {
  for (int turn = 0;; ++turn) {
    Result<ChatResponse> response = chat.Complete(request);
    ++report->calls;
    if (!response.ok()) return response.status().WithContext("schema discovery " + pass);
    report->prompt_tokens += response->prompt_tokens;
    report->completion_tokens += response->completion_tokens;
    if (response->from_cache) ++report->cache_hits;
    const bool truncated = response->finish_reason == "length";
    JsonRepairOptions json_options;
    json_options.allow_truncated = truncated;
    Result<RepairedJson> json = ParseLlmJson(response->content, json_options);
    Status st = json.ok() ? read(json->value) : json.status();
    if (st.ok()) {
      for (const std::string& r : json->repairs) report->repairs.push_back(r);
      if (json->truncated) {
        report->truncated = true;
        report->repairs.push_back("closed an answer cut off by the token limit (max_tokens " +
                                  std::to_string(request.max_tokens) + ")");
      }
      return Status::Ok();
    }
    if (turn >= turns) {
      return Status::Unavailable(
          "schema discovery " + pass + ": the model's answer is unusable after JSON repair" +
          (turns > 0 ? " and " + std::to_string(turns) + " follow-up turn(s)" : std::string()) +
          ": " + st.message());
    }
    report->repairs.push_back("asked again after an unusable answer: " + st.message());
    request = DiscoveryFormatRepairRequest(request, response->content, st.message());
  }
}

}  // namespace

Result<SchemaContract> DiscoverWithLlm(const InducedSchema& schema, const std::string& dir,
                                       ChatModel& chat, const LlmDiscoveryOptions& options,
                                       LlmDiscoveryReport* report) {
  FLOWRAG_RETURN_IF_ERROR(CheckOptions(options));
  LlmDiscoveryReport local;
  LlmDiscoveryReport& rep = report != nullptr ? *report : local;
  rep = LlmDiscoveryReport{};
  rep.model = chat.Model();

  const SchemaContract offline = DeriveContract(schema);
  std::map<std::string, std::string> known;  // offline type → source
  for (const EntityType& t : offline.entity_types) known[t.name] = t.source;
  const FieldCatalog catalog(schema);

  FLOWRAG_ASSIGN_OR_RETURN(std::vector<SourceSamples> sources, ReadSamples(schema, dir, options));
  std::string samples1, samples2;
  const size_t budget1 = options.pass1_sample_tokens * options.chars_per_token;
  const size_t budget2 = options.pass2_sample_tokens * options.chars_per_token;
  size_t rounds = 0;
  for (const SourceSamples& s : sources) rounds = std::max(rounds, s.blocks.size());
  for (size_t round = 0; round < rounds; ++round) {
    for (const SourceSamples& s : sources) {
      const std::vector<std::string>& b = s.blocks;
      if (round >= b.size()) continue;
      const std::string& block = b[round];
      if (samples1.size() + block.size() <= budget1) {
        samples1 += block;
        ++rep.pass1.samples;
      } else if (samples2.size() + block.size() <= budget2) {
        samples2 += block;
        ++rep.pass2.samples;
      }
    }
  }

  DiscoveryPromptInput input;
  input.description = options.description;
  std::set<std::string> formats;
  for (const SourceInfo& s : schema.sources) {
    input.records += s.records;
    if (formats.insert(s.format).second)
      input.formats += (input.formats.empty() ? "" : ", ") + s.format;
  }
  input.catalog = RenderFieldCatalog(schema);
  input.hints = RenderStructuralHints(offline);

  // Pass 1: deep discovery.
  input.samples = samples1;
  input.matched = MatchedBlocks(schema, sources, options, &rep.pass1.matched_sets);
  SchemaProposal proposal;
  FLOWRAG_RETURN_IF_ERROR(RunPass(
      chat, DeepDiscoveryRequest(input, options.max_tokens, options.temperature),
      "pass 1 (deep discovery)", options.format_repair_turns,
      [&](const Json& answer) -> Status {
        ProposalCheck check;
        Result<SchemaProposal> p = ReadDiscoveryAnswer(answer, catalog, known, &check);
        if (!p.ok()) return p.status();
        proposal = std::move(p).value();
        rep.pass1.check = std::move(check);
        return Status::Ok();
      },
      &rep.pass1));

  // Pass 2: validation and extension.
  input.samples = samples2;
  input.matched.clear();
  input.existing = RenderExistingSchema(ProposalToJson(proposal, catalog, known));
  FLOWRAG_RETURN_IF_ERROR(RunPass(
      chat, ValidationRequest(input, options.max_tokens, options.temperature),
      "pass 2 (validation)", options.format_repair_turns,
      [&](const Json& answer) -> Status {
        ProposalCheck check;
        SchemaProposal extended = proposal;
        FLOWRAG_RETURN_IF_ERROR(ApplyValidationAnswer(answer, catalog, known, &extended, &check));
        proposal = std::move(extended);
        rep.pass2.check = std::move(check);
        return Status::Ok();
      },
      &rep.pass2));

  SchemaContract contract = MergeProposal(offline, &proposal, &rep.merge);
  contract.generated_by = "llm:" + rep.model;
  rep.proposal = std::move(proposal);
  // The linter (A.6.1) must accept what we return.
  Result<SchemaContract> linted = ParseContract(ToYaml(contract), "<llm schema discovery>");
  if (!linted.ok()) {
    return Status::Internal("the merged contract fails the linter: " + linted.status().message());
  }
  return contract;
}

}  // namespace flowrag
