// ReadSession: the read half of the engine. One session per published
// snapshot: it owns that snapshot and everything derived from it (the
// schema agent's index, the seed indexes retrievers build at first use) and
// answers every read — Query, Ask, the document list, the graph view, the
// graph statistics — against it alone.
//
// A caller holds its session for the whole call (shared ownership), so an
// engine that publishes a new session after a write never waits for the
// queries running on the old one, and never changes the evidence under
// them; the old session (and its snapshot) goes when the last call ends.
// A deleted document can be hidden from a session before its snapshot
// without it is published (WithTombstone, session/tombstones.h).
//
// What sessions share is in SessionServices: the retrievers with their
// options, built once when the engine opens (a query's overrides are applied
// per call), the default method, the chat model handle and the source of the
// schema contract. A session never reads the store except, once, for the
// schema contract's records when its first schema question arrives.
//
// Thread-safety: every method is const and safe to call concurrently.
#ifndef FLOWRAG_SESSION_READ_SESSION_H_
#define FLOWRAG_SESSION_READ_SESSION_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/graph.h"
#include "flowrag/models.h"
#include "flowrag/options.h"
#include "flowrag/types.h"
#include "agent/schema_index.h"
#include "flowrag/schema.h"
#include "graph/snapshot.h"
#include "retrieval/retriever.h"
#include "session/tombstones.h"

namespace flowrag {

// QueryOptions::method "auto": `default_method` when set
// (EngineOptions::default_method), else the best method measured for what
// the snapshot holds (qafd over a graph with entities, else hybrid); any
// other name is returned as given.
inline constexpr std::string_view kAutoMethod = "auto";
std::string_view ResolveMethod(const Snapshot& snapshot, std::string_view method,
                               const std::string& default_method);

// What the sessions of one engine share; immutable once the engine is
// open (the chat model is made on first use, thread-safely, by `chat`).
struct SessionServices {
  // Every method by name, built once.
  std::map<std::string, std::unique_ptr<Retriever>, std::less<>> retrievers;
  // Per method, the EngineOptions::default_params it reads (a query's own
  // params win).
  std::map<std::string, std::map<std::string, std::string>> method_defaults;
  std::string default_method;  // EngineOptions::default_method
  // The query-time chat model: null without one; an error when the
  // configured one cannot be made.
  std::function<Result<ChatModel*>()> chat;
  // The store's schema contract and the records it was ingested with
  // (SchemaIndex's input), read when a session's first schema question
  // needs them; nullopt when the store has no contract.
  struct SchemaInput {
    SchemaContract contract;
    std::vector<RecordInput> records;
  };
  std::function<Result<std::optional<SchemaInput>>()> schema;
};

// Makes the retrievers of every method with the default options
// `default_params` (EngineOptions::default_params) sorted per method.
Result<std::unique_ptr<SessionServices>> MakeSessionServices(const EngineOptions& options);

class ReadSession {
 public:
  // REQUIRES: `snapshot` not null; `services` outlives every session.
  // `tombstones` (may be null): documents of the snapshot already deleted
  // from the store, hidden from every read (session/tombstones.h).
  ReadSession(std::shared_ptr<const Snapshot> snapshot, const SessionServices* services,
              std::shared_ptr<const Tombstones> tombstones = nullptr)
      : snapshot_(std::move(snapshot)), services_(services), tombstones_(std::move(tombstones)) {}

  const std::shared_ptr<const Snapshot>& snapshot() const { return snapshot_; }
  // This session's snapshot with document `document_id` hidden as well;
  // null when the snapshot has no such document.
  std::shared_ptr<const ReadSession> WithTombstone(std::string_view document_id) const;

  // Ranked passages with the method `options` names (auto resolved), the
  // chat model of the services (query-time LLM steps) when one is set.
  Result<RetrievalResult> Query(std::string_view question, const QueryOptions& options) const;
  // The same with a given chat model (null: offline): Ask's rounds.
  Result<RetrievalResult> QueryWith(std::string_view question, const QueryOptions& options,
                                    ChatModel* chat) const;
  // The answer pipeline, or the schema agent when the store has a contract
  // (or options.pipeline is "schema"); every round reads this session.
  Result<Answer> Ask(std::string_view question, const AnswerOptions& options) const;

  Result<DocumentPage> ListDocuments(std::string_view cursor, size_t limit) const;
  Result<StoredDocument> GetDocument(std::string_view id) const;
  std::shared_ptr<const GraphView> Graph() const;
  Result<FloatMatrix> Embed(const std::vector<std::string>& texts) const;
  // The graph's node and edge counts and degree statistics (the store's
  // extraction counters are the engine's to add).
  void FillGraphStats(GraphStats* stats) const;

 private:
  // The schema agent's routing context, built on the first schema question
  // and kept with the snapshot (Snapshot::Derived); null without a contract.
  Result<std::shared_ptr<const SchemaIndex>> SchemaIndexOf() const;
  // Whether snapshot document `document` is tombstoned.
  bool Hidden(uint32_t document) const;

  std::shared_ptr<const Snapshot> snapshot_;
  const SessionServices* services_;
  std::shared_ptr<const Tombstones> tombstones_;  // null: nothing hidden
};

}  // namespace flowrag

#endif  // FLOWRAG_SESSION_READ_SESSION_H_
