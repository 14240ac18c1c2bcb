// OpenIE import: reads precomputed (LLM) OpenIE results so the engine can
// build its graph from LLM-quality extractions without calling an LLM.
//
// Two formats are read (chosen by DetectOpenIeFormat):
//
//   kBenchmarkJsonl   the normalised benchmark file data/bench/<name>/openie.jsonl:
//                     one object per line {"id", "entities": [..], "triples": [[s, r, o], ..]}.
//                     "id" is the corpus.jsonl id of the passage (a non-empty string, or an
//                     integer printed in decimal). Blank lines are skipped; a UTF-8 byte order
//                     mark on line 1 is removed. OpenIeRecord::line_or_index = 1-based line.
//   kHippoRagJson     HippoRAG's openie_results_ner_<model>.json: one object
//                     {"docs": [{"idx"?, "passage", "extracted_entities": [..],
//                     "extracted_triples": [[s, r, o], ..]}, ..], ...}. The passage is
//                     identified by its TEXT ("passage"; HippoRAG 2 "idx" is "chunk-" + md5 of
//                     it, HippoRAG v1 "idx" is a corpus index or absent); OpenIePassageMatcher
//                     maps the text to store passages. Other top-level fields ("avg_ent_chars",
//                     "ents_by_doc", ...) and other per-doc fields ("title", "text") are
//                     ignored. OpenIeRecord::line_or_index = 0-based index into "docs".
//
// Both formats are produced by Python's json.dump, which writes the non-standard tokens NaN,
// Infinity and -Infinity (HippoRAG v1 files end in "avg_ent_chars": NaN). Outside strings these
// are read as null and counted in OpenIeReport::nonfinite_numbers_replaced.
//
// Validation, per record (a JSONL line or a "docs" element):
//   RECORD errors (the whole record is unusable): invalid JSON on a line, a record that is not
//     an object, a missing/empty/ill-typed key ("id" or "passage"), "entities" or "triples"
//     missing or not a list, an entity that is not a string, a key already seen in the file.
//     With OpenIeReadOptions::skip_bad_records = false (the default) the first one ends the
//     read with InvalidArgument naming the place and what was expected:
//       openie.jsonl:17: invalid JSON (at column 5: syntax error ...): expected one object per line
//       openie.jsonl:4: "entities"[2] is an integer: expected a string
//       results.json: docs[3]: missing "passage": expected a non-empty string (the passage text)
//     With skip_bad_records = true the record is skipped, counted in records_skipped and its
//     message noted. In a kHippoRagJson file a JSON syntax error, and a top level that is not
//     an object with one non-empty "docs" list, always end the read (a single JSON document
//     cannot be resynchronised). Text must be valid UTF-8: ill-formed bytes are invalid JSON.
//   TRIPLE rejections (the record is kept): a triple that is not a list of exactly three strings
//     (LLM output has lists of 2, 4, 5 or 6 elements), or whose subject or object is empty after
//     trimming, is dropped, counted in triples_rejected and noted. This happens regardless of
//     skip_bad_records: a few malformed triples in an otherwise good extraction are normal.
//   Clean-up (the record is kept): entity names and triple members are trimmed of ASCII
//     whitespace; entities that are empty after trimming are dropped (counted in
//     empty_entities_dropped and noted); exact duplicates (after trimming) of an entity or a
//     triple within one record are removed (counted in duplicate_entities_removed and
//     duplicate_triples_removed; not noted, LLM output repeats itself).
//     Entities differing only in case or punctuation are kept apart: resolution merges them.
//     An empty relation is allowed (the triple still links subject and object).
//
// The entity and triple counters of OpenIeReport cover the records accepted by validation only:
// a skipped record contributes to records_read and records_skipped and nothing else. Keys are
// compared exactly: a benchmark id or a HippoRAG passage text may appear once per file.
//
// Errors: NotFound when the file does not exist, IoError when the OS refuses a read (with the
// OS reason), InvalidArgument for malformed content, empty files, unknown formats. Records
// before an error have already reached the sink.
//
// Thread-safety: the free functions keep no shared state and may run concurrently.
// OpenIePassageMatcher has no internal locking and Find records matches, so every call on one
// matcher must be serialised by the caller.
#ifndef FLOWRAG_EXTRACT_OPENIE_IMPORT_H_
#define FLOWRAG_EXTRACT_OPENIE_IMPORT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/extraction.h"
#include "flowrag/status.h"

namespace flowrag {

enum class OpenIeFormat {
  kBenchmarkJsonl,  // data/bench/<name>/openie.jsonl
  kHippoRagJson,    // HippoRAG openie_results_ner_<model>.json
};

std::string_view OpenIeFormatName(OpenIeFormat format);  // "benchmark-jsonl", "hipporag-json"

// The format of `path`:
//   .jsonl / .ndjson (any case)  kBenchmarkJsonl;
//   .json                        kHippoRagJson; the first non-space byte must be '{';
//   any other extension          by content: the first non-space byte must be '{'; a first key
//                                "docs" means kHippoRagJson, anything else kBenchmarkJsonl.
// A leading UTF-8 byte order mark is ignored. Errors name the file: NotFound / IoError when it
// cannot be opened or read; InvalidArgument for a directory (with a hint when it holds an
// openie.jsonl), an empty or whitespace-only file, or content that is not a JSON object.
// Reads at most the first bytes up to the first key.
Result<OpenIeFormat> DetectOpenIeFormat(const std::string& path);

// The OpenIE output for one passage, validated as described at the top of this file.
struct OpenIeRecord {
  // How to find the passage: its corpus id (kBenchmarkJsonl) or its full text (kHippoRagJson).
  std::string passage_key;
  bool key_is_text = false;
  std::vector<std::string> entities;                // trimmed, non-empty, distinct
  std::vector<std::array<std::string, 3>> triples;  // subject, relation, object; trimmed,
                                                    // subject and object non-empty, distinct
  int64_t line_or_index = 0;  // 1-based line (JSONL) or 0-based "docs" index (HippoRAG)
  std::string idx;            // HippoRAG "idx" (string, or integer in decimal); "" when absent
};

struct OpenIeReadOptions {
  // The file format; nullopt: DetectOpenIeFormat(path).
  std::optional<OpenIeFormat> format;
  // When true, malformed records are skipped and counted instead of ending the read (see the
  // top of this file). Malformed triples are dropped and counted either way.
  bool skip_bad_records = false;
  // OpenIeReport::messages keeps at most this many messages.
  size_t max_report_messages = 20;
};

// What an import did besides delivering records. ReadOpenIe resets it at the start of each call;
// ToExtraction adds to it.
struct OpenIeReport {
  int64_t records_read = 0;       // JSONL lines with content / "docs" elements examined
  int64_t records_delivered = 0;  // records the sink accepted
  int64_t records_skipped = 0;    // malformed records skipped (skip_bad_records)
  int64_t entities_read = 0;      // entity list elements of accepted records
  int64_t entities_kept = 0;
  int64_t empty_entities_dropped = 0;
  int64_t duplicate_entities_removed = 0;
  int64_t triples_read = 0;  // triple list elements of accepted records
  int64_t triples_kept = 0;  // read - rejected - duplicates, as counted by ReadOpenIe
  int64_t triples_rejected = 0;
  int64_t duplicate_triples_removed = 0;
  int64_t nonfinite_numbers_replaced = 0;  // NaN / Infinity / -Infinity read as null
  // Added by ToExtraction: triple subjects/objects that are not among the record's entities.
  int64_t entities_added_from_triples = 0;
  int64_t aliases_added_from_triples = 0;
  // The first max_report_messages messages about skipped records, rejected triples and dropped
  // entities, in the format of the error messages.
  std::vector<std::string> messages;
};

// Receives each record. Returning a non-OK Status stops the read, and ReadOpenIe returns that
// Status unchanged.
using OpenIeSink = std::function<Status(OpenIeRecord&&)>;

// Reads every record of `path` in file order and passes it to `sink`. `report` (optional, not
// owned) receives counts and messages.
// Memory: one record at a time (kHippoRagJson files are parsed as a stream, one "docs" element
// at a time) plus the set of passage keys seen, to reject duplicates.
// Complexity: linear in the file size.
Status ReadOpenIe(const std::string& path, const OpenIeReadOptions& options, const OpenIeSink& sink,
                  OpenIeReport* report = nullptr);

// Convenience for tests and small files: collects all records in memory.
Result<std::vector<OpenIeRecord>> ReadAllOpenIe(const std::string& path,
                                                const OpenIeReadOptions& options = {},
                                                OpenIeReport* report = nullptr);

// Converts a record into the extraction of store passage `passage_id`:
//   - every record entity becomes an ExtractedEntity{name, type "", defining = true, count 1};
//   - every triple becomes an ExtractedTriple. OpenIE often names a subject or object that is
//     not in its entity list ("monthly publication in 1963"). Such a name is
//       * added as an alias of the first entity with the same EntityKey (different case or
//         punctuation only: "Person - centered therapy" for "Person-centered therapy"),
//         counted in aliases_added_from_triples, or else
//       * ADDED as a new entity (defining, type ""), counted in entities_added_from_triples,
//     so that every triple's subject and object is an entity name or alias of the result, as
//     PassageExtraction requires.
// The record is re-checked so hand-built records obey the same rules as read ones: names are
// trimmed, empty entities and exact duplicates dropped, triples with an empty subject or object
// rejected, all counted in `report` (optional, not owned) when given.
// Complexity: O((entities + triples) log triples).
PassageExtraction ToExtraction(const OpenIeRecord& record, int64_t passage_id,
                               OpenIeReport* report = nullptr);

// Documents keep their structure whatever extracted their passages: the
// passage's document title becomes its TITLE entity, defining and first (as
// the offline extractor has it), so the walks read the same passage–title
// links on an OpenIE graph as on the offline one. An entity the record
// already names under the title's EntityKey is that entity, retyped TITLE.
// Nothing happens for an empty title. O(entities).
void AddTitleEntity(std::string_view title, PassageExtraction* extraction);

// Collapses every run of ASCII whitespace to one space and trims the ends: the text key under
// which OpenIePassageMatcher compares passages after an exact match failed.
std::string NormalizeWhitespace(std::string_view text);

// Finds the store passages an OpenIE record belongs to, independent of the store: the caller
// registers each passage, then looks records up.
//   - A record with key_is_text = false matches passages registered with that `key`.
//   - A record with key_is_text = true matches passages whose `text`, or `title` + "\n" + `text`
//     (how HippoRAG v1 and the HippoRAG 2 benchmark scripts build passage strings), equals the
//     record's text exactly; failing that, after NormalizeWhitespace on both sides.
// Several passages may share a key or a text (a duplicated passage); all are returned.
// Memory: the registered keys and texts are copied (about four copies of each passage text).
class OpenIePassageMatcher {
 public:
  enum class MatchKind {
    kNone,            // no registered passage matches
    kKey,             // by key (benchmark id)
    kExactText,       // by exact text
    kNormalizedText,  // by whitespace-normalised text
  };
  struct Match {
    MatchKind kind = MatchKind::kNone;
    std::vector<int64_t> passage_ids;  // in registration order; empty for kNone
  };

  // Registers a store passage. `key` is the id benchmark files use (the corpus.jsonl "id", i.e.
  // the document external id); `title` may be empty.
  void AddPassage(int64_t passage_id, std::string_view key, std::string_view title,
                  std::string_view text);

  // The passages `record` belongs to; marks them matched.
  Match Find(const OpenIeRecord& record);

  // Registered passages that no Find has matched so far, in registration order: the passages
  // an OpenIE file is missing.
  std::vector<int64_t> UnmatchedPassages() const;

  size_t passage_count() const { return passages_.size(); }

 private:
  struct Passage {
    int64_t id = 0;
    bool matched = false;
  };
  using Index = std::unordered_map<std::string, std::vector<size_t>>;  // key → passages_ slots
  static void AddTo(Index& index, std::string key, size_t slot);
  Match Take(const std::vector<size_t>& slots, MatchKind kind);

  std::vector<Passage> passages_;
  Index by_key_;
  Index by_text_;
  Index by_normalized_text_;
};

}  // namespace flowrag

#endif  // FLOWRAG_EXTRACT_OPENIE_IMPORT_H_
