#include "indexing/schema_records.h"

#include <set>
#include <unordered_map>

#include "common/hash.h"
#include "common/text.h"
#include "indexing/ingest_phase.h"
#include "lexical/aho_corasick.h"
#include "storage/graph_writer.h"

namespace flowrag {
namespace {

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

Status WriteRecordDocuments(IndexContext& ctx, const ConstructionPlan& plan,
                            const IngestOptions& options, IngestReport* report) {
  IndexReport& ix = ctx.report;
  const std::string chunking = "schema/v1:" + options.index.chunking.Signature();
  std::vector<DocumentWrite> batch;
  auto flush = [&]() { return CommitDocumentBatch(ctx, &batch); };
  std::set<std::string> planned;
  // Every source of the contract: one now excluded or emptied loses its records too.
  const std::set<std::string> sources(plan.source_order.begin(), plan.source_order.end());
  for (const PlannedRecord& r : plan.records) {
    ++ix.documents_seen;
    planned.insert(r.document_id);
    const uint64_t hash = RecordHash(r, chunking);
    FLOWRAG_ASSIGN_OR_RETURN(auto stored, ctx.stores.documents.DocumentHash(r.document_id));
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
  FLOWRAG_RETURN_IF_ERROR(ctx.stores.records.ForEachSourceRecord([&](SourceRecordStore::SourceRecordRow&& row) -> Status {
    if (sources.count(row.record.source) && !planned.count(row.external_id)) {
      gone.push_back(row.external_id);
    }
    return Status::Ok();
  }));
  for (const std::string& id : gone) FLOWRAG_RETURN_IF_ERROR(ctx.stores.documents.DeleteDocument(id));
  report->records_removed = gone.size();
  return Status::Ok();
}

namespace {

using RecordApply =
    std::function<Status(GraphWriter&, const PlannedRecord&, const std::vector<int64_t>&)>;

// Runs `apply` for each record with stored passages (their ids, ordinal
// order), extract_batch_size records per transaction; counts go to
// ctx.report.
Status ForRecordBatches(IndexContext& ctx, const ConstructionPlan& plan,
                        const std::unordered_map<std::string, std::vector<int64_t>>& passages,
                        const RecordApply& apply) {
  const size_t batch = ExtractBatchSize(ctx.options, /*offline=*/false);
  IndexReport& ix = ctx.report;
  for (size_t begin = 0; begin < plan.records.size(); begin += batch) {
    GraphWriteReport g;
    FLOWRAG_RETURN_IF_ERROR(ctx.stores.graph.WriteGraph(
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
}

// Pass 1: a record defines its entity (row_as_entity) and its field
// instances (field / nested_field) and llm instances, each on the passage
// it was read from; its text chunks mention its entity.
Status DefineRecordEntities(GraphWriter& w, const PlannedRecord& r,
                            const std::vector<int64_t>& ids) {
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
}

// Pass 2: a record's relationships, once every entity exists (any source
// order, cycles too).
Status AddRecordLinks(GraphWriter& w, const PlannedRecord& r, const std::vector<int64_t>& ids) {
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
}

// Pass 3's matcher: the names of record entities and field instances
// (payload: index into *named).
TokenTrie RecordNameMatcher(const ConstructionPlan& plan, std::vector<PlannedEntity>* named) {
  std::vector<TriePattern> patterns;
  std::set<std::string> seen;
  auto add = [&](const std::string& title, const std::string& type) {
    if (!Linkable(title) || !seen.insert(title).second) return;
    patterns.push_back({title, static_cast<uint32_t>(named->size())});
    named->push_back({title, type});
  };
  for (const PlannedRecord& r : plan.records) {
    if (r.text_document) continue;
    add(r.title, r.entity_type);
    for (const PlannedEntity& d : r.derived) add(d.name, d.type);
  }
  return TokenTrie::Build(patterns);
}

// Pass 3: the record names a text document's passages mention (type
// co-occurrence, B.5.2), linked to them; *mentions counts them.
Status LinkRecordNamesInText(GraphWriter& w, const PlannedRecord& r,
                             const std::vector<int64_t>& ids, const TokenTrie& trie,
                             const std::vector<PlannedEntity>& named, size_t* mentions) {
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
    *mentions += ex.entities.size();
    if (!ex.entities.empty()) FLOWRAG_RETURN_IF_ERROR(w.AddToPassage(ex));
  }
  return Status::Ok();
}

}  // namespace

Status WriteRecordGraph(IndexContext& ctx, const ConstructionPlan& plan, IngestReport* report) {
  FLOWRAG_ASSIGN_OR_RETURN(auto passages, ctx.stores.documents.PassagesByDocument());
  FLOWRAG_RETURN_IF_ERROR(ForRecordBatches(ctx, plan, passages, DefineRecordEntities));
  FLOWRAG_RETURN_IF_ERROR(ForRecordBatches(ctx, plan, passages, AddRecordLinks));
  std::vector<PlannedEntity> named;
  const TokenTrie trie = RecordNameMatcher(plan, &named);
  if (trie.empty()) return Status::Ok();
  return ForRecordBatches(
      ctx, plan, passages,
      [&](GraphWriter& w, const PlannedRecord& r, const std::vector<int64_t>& ids) {
        return LinkRecordNamesInText(w, r, ids, trie, named, &report->text_mentions);
      });
}

}  // namespace flowrag
