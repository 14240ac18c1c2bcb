// EngineImpl::Ingest: schema-driven construction (schema-contracts paper,
// Appendix B) into the store. Phases, each resumable:
//   1. plan (schema/construct.h): records, entities, links; nothing written;
//   2. documents: every record a SourceRecord document, written in batches
//      with its source_records row in the same transaction; unchanged
//      records are skipped; records gone from the folder are deleted;
//   3. embeddings of new passages; extraction of text documents;
//   4. graph: record entities (DERIVED_FROM: defined by the record's first
//      passage, mentioned by its text chunks), then their relationships,
//      then record names found in text passages. Each batch is one
//      transaction and is rewritten whole on every run, so a crash between
//      phases is repaired by the next run; an edge to an entity that does
//      not exist is collected with it (link validity stays 100%).
#include <chrono>
#include <set>
#include <unordered_map>

#include "common/hash.h"
#include "common/text.h"
#include "engine/chat_setup.h"
#include "engine/engine_impl.h"
#include "extract/aho_corasick.h"
#include "schema/construct.h"
#include "schema/llm_entities.h"
#include "schema/llm_relations.h"
#include "storage/llm_cache.h"
#include "storage/graph_writer.h"

namespace flowrag {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

constexpr char kSchemaExtractor[] = "schema";

uint64_t RecordHash(const PlannedRecord& r, const std::string& chunking) {
  uint64_t h = Hash64(r.title, 1);
  h = HashCombine(h, Hash64(r.text, 2));
  h = HashCombine(h, Hash64(chunking, 3));
  h = HashCombine(h, Hash64(r.entity_type + "\n" + r.key + "\n" + r.fields_json, 4));
  return h;
}

bool Linkable(const std::string& name) {
  if (name.size() < 3) return false;
  return name.find_first_not_of("0123456789.,-$% ") != std::string::npos;
}

}  // namespace

Result<IngestReport> EngineImpl::Ingest(const std::string& dir, const SchemaContract& contract,
                                        const IngestOptions& options) {
  if (options_.read_only) return Status::FailedPrecondition(store_->path() + ": opened read-only");
  FLOWRAG_RETURN_IF_ERROR(options.index.chunking.Validate());
  FLOWRAG_RETURN_IF_ERROR(ResolveExtractor(options.index).status());
  if (options.index.batch_size == 0 || options.index.extract_batch_size == 0) {
    return Status::InvalidArgument("ingest: batch sizes must be positive");
  }
  FLOWRAG_ASSIGN_OR_RETURN(WriteGuard lock, LockWriter());
  const auto start = Clock::now();
  IngestReport report;

  ConstructionOptions plan_options;
  plan_options.exclusions = options.exclusions;
  plan_options.chunking = options.index.chunking;
  plan_options.dedup_similarity = options.dedup_similarity;
  std::shared_ptr<Embedder> embedder = embedder_;
  NameEmbedder embed = [embedder](const std::vector<std::string>& names) {
    return embedder->Embed(names);
  };
  FLOWRAG_ASSIGN_OR_RETURN(ConstructionPlan plan, PlanConstruction(dir, contract, plan_options, embed));
  FLOWRAG_RETURN_IF_ERROR(PlanLlmExtraction(contract, options, &plan, &report));
  report.plan_seconds = SecondsSince(start);
  report.source_order = plan.source_order;
  report.merged_by_key = plan.merged_by_key;
  report.merged_by_embedding = plan.merged_by_embedding;
  report.field_entities = plan.derived_entities;
  report.links = plan.links;
  report.unresolved_links = plan.unresolved_links;
  report.warnings = plan.warnings;
  std::set<std::string> entity_names;
  for (const PlannedRecord& r : plan.records) {
    (r.text_document ? report.text_documents : report.records) += 1;
    if (!r.text_document) entity_names.insert(EntityKey(r.title));  // as the store resolves names
  }
  report.entities = entity_names.size();

  IndexRunRecord run;
  FLOWRAG_ASSIGN_OR_RETURN(run.id, store_->BeginIndexRun("schema:" + dir));
  run.sources = "schema:" + dir;
  run.status = "running";
  IndexReport& ix = report.index;
  auto phases = [&]() -> Status {
    FLOWRAG_RETURN_IF_ERROR(store_->SetMeta("schema_contract", ToYaml(contract)));
    FLOWRAG_RETURN_IF_ERROR(WriteRecordDocuments(plan, options, &report, &run));
    ix.ingest_seconds = SecondsSince(start);
    const auto embed_start = Clock::now();
    FLOWRAG_RETURN_IF_ERROR(EmbedMissing(options.index, &ix, &run));
    ix.embed_seconds = SecondsSince(embed_start);
    FLOWRAG_RETURN_IF_ERROR(RunExtraction(options.index, &ix));
    const auto graph_start = Clock::now();
    FLOWRAG_RETURN_IF_ERROR(WriteRecordGraph(plan, options, &report));
    // Entity vectors and synonyms for the record entities too.
    size_t texts = 0, synonyms = 0;
    FLOWRAG_RETURN_IF_ERROR(BuildGraphExtras(options.index.progress, &texts, &synonyms));
    ix.graph_texts_embedded += texts;
    ix.synonym_edges += synonyms;
    report.graph_seconds = SecondsSince(graph_start);
    return Status::Ok();
  };
  FLOWRAG_RETURN_IF_ERROR(FinishIndexRun(&run, phases()));
  report.total_seconds = ix.total_seconds = SecondsSince(start);
  return report;
}

// Algorithm 3 / B.3.3 and B.5.3 with the indexing chat model (the
// extractor "llm", or "auto" with a model configured): instances of llm
// entity types, then relationships declared `extraction: llm` (which may
// connect them), before anything is written. Answers are cached in the
// store, so a resumed run asks again for nothing. Without a model both are
// skipped, with a warning.
Status EngineImpl::PlanLlmExtraction(const SchemaContract& contract, const IngestOptions& options,
                                     ConstructionPlan* plan, IngestReport* report) {
  const bool types = !LlmEntityTypes(contract).empty(), relations = HasLlmRelationships(contract);
  if (!types && !relations) return Status::Ok();
  FLOWRAG_ASSIGN_OR_RETURN(std::string extractor, ResolveExtractor(options.index));
  if (extractor.rfind("llm", 0) != 0 || options.index.dry_run) {
    const std::string what = types && relations ? "entity types and relationships" : types ? "entity types" : "relationships";
    plan->warnings.push_back(what + " extracted by llm (Algorithm 3, B.5.3) were not extracted: " +
                             (options.index.dry_run ? "dry run" : "no chat model is used (extractor " + extractor + ")"));
    return Status::Ok();
  }
  StoreResponseCache cache(store_.get());
  FLOWRAG_ASSIGN_OR_RETURN(std::shared_ptr<ChatModel> client, MakeChatModel(options_, &cache));
  const LlmEntityReport e = ExtractLlmEntities(contract, plan, *client);
  const LlmRelationReport r = ExtractLlmRelationships(contract, plan, *client);
  report->llm_entities = e.entities;
  report->llm_links = r.added;
  report->llm_calls = e.calls + r.calls;
  if (e.failed_calls + r.failed_calls > 0) {
    plan->warnings.push_back(std::to_string(e.failed_calls + r.failed_calls) + " of " +
                             std::to_string(report->llm_calls) +
                             " LLM extraction calls failed or were unreadable; what they would have found is missing");
  }
  if (r.over_cap > 0) {
    plan->warnings.push_back(std::to_string(r.over_cap) +
                             " records past the cap of LLM relationship calls per source were not asked");
  }
  return Status::Ok();
}

Status EngineImpl::WriteRecordDocuments(const ConstructionPlan& plan, const IngestOptions& options,
                                        IngestReport* report, IndexRunRecord* run) {
  IndexReport& ix = report->index;
  const std::string chunking = "schema/v1:" + options.index.chunking.Signature();
  std::vector<DocumentWrite> batch;
  auto flush = [&]() { return CommitDocuments(&batch, options.index, &ix, run); };
  std::set<std::string> planned;
  // Every source of the contract: one now excluded or emptied loses its records too.
  const std::set<std::string> sources(plan.source_order.begin(), plan.source_order.end());
  for (const PlannedRecord& r : plan.records) {
    ++ix.documents_seen;
    planned.insert(r.document_id);
    const uint64_t hash = RecordHash(r, chunking);
    FLOWRAG_ASSIGN_OR_RETURN(auto stored, store_->DocumentHash(r.document_id));
    if (stored && *stored == hash) {
      ++ix.documents_unchanged;
      continue;
    }
    DocumentWrite w;
    w.content_hash = hash;
    w.chunking = chunking;
    w.doc.external_id = r.document_id;
    w.doc.title = r.title;
    w.doc.text = r.text;
    w.doc.source = r.file;
    w.doc.line = r.line;
    for (size_t i = 0; i < r.passages.size(); ++i) {
      PassageWrite p;
      p.ordinal = static_cast<int32_t>(i);
      p.begin = r.passages[i].first;
      p.end = r.passages[i].second;
      p.embed_hash =
          Hash64(PassageEmbedText(r.title, std::string_view(r.text).substr(p.begin, p.end - p.begin)));
      w.passages.push_back(p);
    }
    w.record = SourceRecordWrite{r.source,          r.file,           r.line,       r.entity_type,
                                 r.key,             !r.text_document, r.fields_json};
    batch.push_back(std::move(w));
    if (batch.size() >= options.index.batch_size) FLOWRAG_RETURN_IF_ERROR(flush());
  }
  FLOWRAG_RETURN_IF_ERROR(flush());
  if (!options.remove_missing) return Status::Ok();
  std::vector<std::string> gone;
  FLOWRAG_RETURN_IF_ERROR(store_->ForEachSourceRecord([&](Store::SourceRecordRow&& row) -> Status {
    if (sources.count(row.record.source) && !planned.count(row.external_id)) {
      gone.push_back(row.external_id);
    }
    return Status::Ok();
  }));
  for (const std::string& id : gone) FLOWRAG_RETURN_IF_ERROR(store_->DeleteDocument(id));
  report->records_removed = gone.size();
  return Status::Ok();
}

Status EngineImpl::WriteRecordGraph(const ConstructionPlan& plan, const IngestOptions& options,
                                    IngestReport* report) {
  FLOWRAG_ASSIGN_OR_RETURN(auto passages, store_->PassagesByDocument());
  const size_t batch = options.index.extract_batch_size;
  IndexReport& ix = report->index;
  // Runs `make` for records [i, i + batch) in one transaction each.
  auto in_batches = [&](const std::function<Status(GraphWriter&, const PlannedRecord&,
                                                   const std::vector<int64_t>&)>& apply) -> Status {
    for (size_t begin = 0; begin < plan.records.size(); begin += batch) {
      GraphWriteReport g;
      FLOWRAG_RETURN_IF_ERROR(store_->WriteGraph(
          [&](GraphWriter& w) -> Status {
            for (size_t i = begin; i < std::min(plan.records.size(), begin + batch); ++i) {
              auto it = passages.find(plan.records[i].document_id);
              if (it == passages.end() || it->second.empty()) continue;
              FLOWRAG_RETURN_IF_ERROR(apply(w, plan.records[i], it->second));
            }
            return Status::Ok();
          },
          &g));
      ix.entities_created += g.entities_created;
      ix.entities_deleted += g.entities_deleted;
      ix.facts_created += g.facts_created;
      ix.triples_rejected += g.triples_rejected;
    }
    return Status::Ok();
  };
  // Pass 1: every record defines its entity (row_as_entity) and its field
  // instances (field / nested_field) and llm instances, each on the passage
  // it was read from; its text chunks mention its entity.
  FLOWRAG_RETURN_IF_ERROR(in_batches(
      [&](GraphWriter& w, const PlannedRecord& r, const std::vector<int64_t>& ids) -> Status {
        if (r.text_document && r.derived.empty()) return Status::Ok();
        for (size_t k = 0; k < ids.size(); ++k) {
          PassageExtraction ex;
          ex.passage_id = ids[k];
          if (!r.text_document) {
            ExtractedEntity e;
            e.name = r.title;
            e.type = r.entity_type;
            e.defining = k == 0;
            ex.entities.push_back(std::move(e));
          }
          for (const PlannedEntity& d : r.derived) {
            if (d.passage != k) continue;
            ExtractedEntity f;
            f.name = d.name;
            f.type = d.type;
            ex.entities.push_back(std::move(f));
          }
          if (!ex.entities.empty()) FLOWRAG_RETURN_IF_ERROR(w.ApplyPassage(ex, kSchemaExtractor));
        }
        return Status::Ok();
      }));
  // Pass 2: relationships, once every entity exists (any source order, cycles too).
  FLOWRAG_RETURN_IF_ERROR(in_batches(
      [&](GraphWriter& w, const PlannedRecord& r, const std::vector<int64_t>& ids) -> Status {
        if (r.links.empty()) return Status::Ok();
        PassageExtraction ex;
        ex.passage_id = ids[0];
        ExtractedEntity self;
        self.name = r.title;
        self.type = r.entity_type;
        ex.entities.push_back(self);
        for (const PlannedLink& l : r.links) {
          for (const std::string& name : {l.subject, l.target}) {
            if (name.empty()) continue;
            ExtractedEntity t;
            t.name = name;
            t.defining = false;
            ex.entities.push_back(std::move(t));
          }
          ex.triples.push_back({l.subject.empty() ? r.title : l.subject, l.relation, l.target});
        }
        return w.AddToPassage(ex);
      }));
  // Pass 3: record entities and field instances named in text passages
  // (type co-occurrence, B.5.2).
  std::vector<PlannedEntity> named;
  std::vector<TriePattern> patterns;
  std::set<std::string> seen;
  auto name = [&](const std::string& title, const std::string& type) {
    if (!Linkable(title) || !seen.insert(title).second) return;
    patterns.push_back({title, static_cast<uint32_t>(named.size())});
    named.push_back({title, type});
  };
  for (const PlannedRecord& r : plan.records) {
    if (r.text_document) continue;
    name(r.title, r.entity_type);
    for (const PlannedEntity& d : r.derived) name(d.name, d.type);
  }
  const TokenTrie trie = TokenTrie::Build(patterns);
  if (trie.empty()) return Status::Ok();
  return in_batches(
      [&](GraphWriter& w, const PlannedRecord& r, const std::vector<int64_t>& ids) -> Status {
        if (!r.text_document) return Status::Ok();
        for (size_t k = 0; k < ids.size() && k < r.passages.size(); ++k) {
          const auto [b, e] = r.passages[k];
          PassageExtraction ex;
          ex.passage_id = ids[k];
          std::set<uint32_t> found;
          for (const TrieMatch& m : trie.Scan(TokenizedText(std::string_view(r.text).substr(b, e - b)))) {
            for (uint32_t id : trie.payloads(m.entry)) found.insert(id);
          }
          for (uint32_t id : found) {
            if (named[id].name == r.title) continue;
            ExtractedEntity t;
            t.name = named[id].name;
            t.type = named[id].type;
            t.defining = false;
            ex.entities.push_back(std::move(t));
          }
          report->text_mentions += ex.entities.size();
          if (!ex.entities.empty()) FLOWRAG_RETURN_IF_ERROR(w.AddToPassage(ex));
        }
        return Status::Ok();
      });
}

}  // namespace flowrag
