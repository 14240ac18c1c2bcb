// GraphWriter: writes extractions into the graph tables of the store inside
// one transaction (Store::WriteGraph), with provenance and resolution.
//
// Resolution (SA-RAG §5.3): an extracted entity is the existing entity that
// one of its keys (EntityKey of its name, then of each alias) already maps
// to, else a new entity. Keys are recorded per passage (entity_keys), so an
// alias is remembered exactly as long as a passage that gave it. A key that
// already maps to a different entity is not remapped (counted as a conflict).
//
// Canonical name and type of an entity are recomputed from its current
// mentions after every write that can change them: the surface form (and the
// non-empty type) with the most occurrences, ties broken by the smaller
// string, so the graph does not depend on insertion order (delete + re-add
// gives the same graph). A type given by a schema record (a passage extracted
// by "schema") wins over extracted ones. A write that only adds mentions in
// an entity's current name and type leaves it alone (MayRename): those can
// only add to the winners.
//
// Garbage collection (Finish): an entity lives while some passage defines it
// (a mention with defining = 1); otherwise it is deleted, and with it (ON
// DELETE CASCADE) its keys, dictionary-linked mentions, descriptions, facts
// and synonym edges. Facts without any source passage are deleted.
//
// Round trips (PostgreSQL). An index of 2wiki ran ~840k statements, one
// round trip each (pg_stat_statements): ~650k were writes whose results
// nobody read (facts and their sources 250k, keys 79k, mentions 77k, the
// synonym pass 100k), the rest lookups (keys 61k, canonical names 61k, new
// entities' ids 45k, relations 63k). So the writes whose results are not
// needed at once (keys, mentions, descriptions, relations, facts and their
// sources, renames, extraction marks, a passage's old rows) are queued
// (Statement::Queue) and go to the server in one pipeline with the next
// statement whose result is read: a key lookup (16 keys per statement),
// the ids of a passage's new entities (their inserts go out together), the
// canonical names of 16 touched entities. Facts and their sources name
// their relation by text, so a triple waits for nothing. Counts in the
// report are complete after Finish().
// Why a pipeline rather than multi-row INSERT ... VALUES (...), (...): the
// SQL stays one row per statement, the same text on both backends, and
// every row is written in the order, with the ids, of a statement-by-
// statement write (multi-row statements would need a text per row count,
// differ in ON CONFLICT within one statement, and RETURNING does not promise
// the order of VALUES), so a PostgreSQL store is byte-for-byte what it was
// before; SQLite, in process, gains nothing from either.
//
// Thread-safety: used only inside Store::WriteGraph, which holds the store's
// lock. Not copyable.
#ifndef FLOWRAG_STORAGE_GRAPH_WRITER_H_
#define FLOWRAG_STORAGE_GRAPH_WRITER_H_

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/extraction.h"
#include "flowrag/status.h"
#include "sqldb/connection.h"

namespace flowrag {

struct GraphWriteReport {
  size_t passages = 0;
  size_t entities_created = 0;
  size_t entities_deleted = 0;
  size_t mentions = 0;
  size_t descriptions = 0;
  size_t facts_created = 0;
  size_t fact_sources = 0;
  size_t facts_deleted = 0;
  size_t triples_rejected = 0;  // subject or object not among the passage's entities
  size_t key_conflicts = 0;     // an alias already naming another entity
  size_t passages_gone = 0;     // replaced or deleted since they were read (PassageHolds)
  std::set<int64_t> created_entities;
  std::set<int64_t> renamed_entities;  // canonical name changed (embedding changes)
};

class GraphWriter {
 public:
  explicit GraphWriter(SqlConnection* conn) : conn_(conn) {}
  GraphWriter(const GraphWriter&) = delete;
  GraphWriter& operator=(const GraphWriter&) = delete;

  Status Prepare();

  // Replaces everything passage `ex.passage_id` contributed to the graph with
  // `ex` and records it as extracted by `extractor`.
  // `detail` is recorded with it (Store::PendingPassage::extracted_with).
  Status ApplyPassage(const PassageExtraction& ex, std::string_view extractor,
                      std::string_view detail = "");

  // Adds `ex`'s entities (normally non-defining dictionary links) and triples
  // to a passage, keeping what it already has. Counts of an existing mention
  // become the larger of the two; a defining mention stays defining.
  Status AddToPassage(const PassageExtraction& ex);

  // Removes everything passage `passage_id` contributed (before the passage
  // itself is deleted); Finish() then collects what only it supported. The
  // names its title gave are no longer linked (GraphSink::LinkedNames): if
  // they come back, the passages naming them are extracted again.
  Status ForgetPassage(int64_t passage_id);

  // True when passage `passage_id` is still stored with the text whose
  // Hash64(PassageEmbedText(...)) is `embed_hash`; it then stays so until
  // the transaction ends (PostgreSQL: FOR KEY SHARE). False (and counted in
  // passages_gone) when another writer replaced or deleted it since it was
  // read: an extraction of it must not be written (SQLite may even have
  // given its id to a new passage).
  Result<bool> PassageHolds(int64_t passage_id, uint64_t embed_hash);

  // meta.titles_generation: incremented by every write that adds, replaces
  // or deletes documents (so changes the offline extractor's dictionary of
  // titles); 0 in a store that has had none. It then stays so until the
  // transaction ends (PostgreSQL: FOR SHARE on the row; SQLite has one
  // writer at a time): an extraction made with the dictionary of this
  // generation may be written, one made with an older one must be made
  // again (indexing/extraction_phase.cc).
  Result<int64_t> TitlesGeneration();

  // Records a failed extraction so it is reported (and retried next run).
  Status MarkFailed(int64_t passage_id, std::string_view extractor, std::string_view detail);

  // Garbage collection and canonical names (see the file comment). Call once
  // after the last Apply/Add of the transaction. The collection looks only
  // at what the transaction touched: the entities whose mentions it cleared
  // or that it created, the facts whose sources it cleared (O(change), not
  // a scan of the graph tables), and the relations table.
  Status Finish();

  // With `collect` false, Finish() leaves the entities no passage defines
  // (yet) for a later CollectOrphans(): a run that writes in batches keeps
  // an entity one batch links and a later batch defines, so its graph does
  // not depend on the batch size, nor on where a crashed run stopped.
  void set_collect(bool collect) { collect_ = collect; }
  // Collects every orphan of the store, now, whatever this transaction
  // wrote: a scan of the entities, facts and relations (the end of a run
  // whose batches left theirs, and of one that completes a crashed run's).
  Status CollectOrphans();

  const GraphWriteReport& report() const { return report_; }

 private:
  Status ClearPassage(int64_t passage_id);
  // `cleared`: the passage's earlier rows were removed first (ApplyPassage),
  // so each mention row written carries this extraction's surface.
  Status AddEntities(const PassageExtraction& ex, bool cleared,
                     std::unordered_map<std::string, int64_t>* local);
  // Whether a new mention of entity `id` as `e` can change its canonical
  // name or type (true when its current ones were not looked up).
  bool MayRename(int64_t id, const ExtractedEntity& e) const;
  // Records entity `id`'s stored name and type for MayRename (the first seen
  // in the transaction; a hub's key rows all repeat it).
  void RememberName(int64_t id, std::string_view name, std::string_view type);
  Status AddTriples(const PassageExtraction& ex,
                    const std::unordered_map<std::string, int64_t>& local);
  // Looks up the keys of `ex`'s entities not looked up yet, several per
  // statement, into KeyOwner's memo.
  Status PrefetchKeys(const PassageExtraction& ex);
  // The entity one of `e`'s keys maps to (KeyOwner), 0 when none does.
  Result<int64_t> Resolve(const ExtractedEntity& e);
  // The entity `key` maps to (0: none). Lookups are remembered for the
  // transaction (its write lock keeps other writers out); ClearPassage
  // forgets them when it deletes keys.
  Result<int64_t> KeyOwner(const std::string& key);
  // Canonical names and types of the touched entities.
  Status Canonicalise();
  // Finish()'s collection: the touched entities and facts, then relations.
  Status CollectTouched();
  // Relations without facts (a scan of the relations table).
  Status CollectRelations();

  SqlConnection* conn_;
  GraphWriteReport report_;
  std::set<int64_t> touched_;  // entities whose mentions changed
  std::set<int64_t> unsourced_;  // facts that lost a source (when collecting)
  bool removed_ = false;       // a passage's earlier rows were cleared
  bool collect_ = true;        // Finish() collects (set_collect)
  // Relations inserted or known to exist in this transaction (until a
  // collection).
  std::set<std::string> relations_known_;
  std::unordered_map<std::string, int64_t> key_owners_;  // KeyOwner's memo
  // Name and type of the entities the key lookups met, as stored when looked
  // up (Canonicalise renames at Finish; MayRename).
  std::unordered_map<int64_t, std::pair<std::string, std::string>> names_;
  // Rows of queued statements (Statement::Queue), counted as they run.
  int64_t descriptions_inserted_ = 0, facts_inserted_ = 0, fact_sources_inserted_ = 0;
  int64_t cleared_keys_ = 0, cleared_rows_ = 0;  // ClearPassage's deletions
  Statement find_key_, find_keys_, insert_entity_, insert_key_, upsert_mention_,
      insert_description_, insert_relation_, insert_fact_, insert_fact_source_, mark_,
      clear_keys_, clear_mentions_, clear_descriptions_, clear_fact_sources_,
      clear_fact_sources_returning_, collect_entity_, collect_fact_, canonical_, rename_,
      passage_hash_;
};

}  // namespace flowrag

#endif  // FLOWRAG_STORAGE_GRAPH_WRITER_H_
