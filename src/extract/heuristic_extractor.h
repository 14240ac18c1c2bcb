// The offline extractor (the default): deterministic, model-free and fast.
//
// For each passage it produces a PassageExtraction (common/extraction.h):
//
//  * Title entity. Every passage of a titled document gets the title as an
//    entity of type "TITLE", defining. The passage at ordinal 0 (the title
//    passage) gives it a description: its first sentence (markdown headings
//    and a sentence that only repeats the title are skipped).
//  * Detected spans (lexical/entity_spans.h): proper nouns, dates, numbers,
//    typed "PROPER_NOUN", "DATE", "NUMBER", defining.
//  * Dictionary links. Every name of an EntityDictionary (titles of other
//    documents and their aliases) is matched in every passage with one
//    token-level Aho–Corasick scan (lexical/aho_corasick.h), so a passage
//    that names another document's subject is connected to it: the linked
//    entity is the canonical name, non-defining, with the surface form as an
//    alias when it differs. A name whose tokens are capitalised only matches
//    where the text capitalises them too ("Hope" links "Hope was ..." but not
//    "the hope of"), and a one-token match at a sentence start never links a
//    function word ("It", "The"). A name does not link where a longer
//    proper-noun span continues it with a capitalised word ("Juan Carlos" in
//    "Juan Carlos Real Ruiz"; "Lothair II of Lotharingia" and "King Edward
//    the Confessor" do link), and a name of one content token (a leading
//    "The" aside) does not link inside any longer span ("Los" in "Los
//    Angeles") or at a sentence start when the passage writes the word in
//    lower case elsewhere. A match of the passage's own title counts
//    as the title entity. An alias shared by several entities links to all
//    of them, up to max_alias_candidates; a name that equals one entity's
//    canonical name links only that one.
//  * Facts. For every sentence, every unordered pair of distinct entities
//    occurring in it (the first max_entities_per_sentence by first
//    occurrence) gives a triple: subject = the earlier entity, object = the
//    later one, relation = the phrase that introduces the later mention
//    (options.relation; or the sentence text), whitespace collapsed, capped
//    at max_relation_bytes at a UTF-8 boundary. A titled passage is about
//    its title subject, so the title entity also pairs with every entity of
//    every sentence that does not name it ("She was a daughter of Boso" in
//    the passage titled "Teutberga" gives (Teutberga, "She was a daughter
//    of", Boso)).
//    Pairs of two literals (DATE/NUMBER) are skipped unless pair_literals.
//
// A span inside the range of a title or dictionary match is part of the
// linked entity, not a second one ("True Story" in "Gaby: A True Story");
// a span that extends one ("Emperor Lothair I" around "Lothair I") stays.
// Entities are deduplicated within a passage by NameKey
// (equal to EntityKey for names without non-ASCII punctuation).
//
// Corpus use, two passes:
//   auto names = extractor.CollectDefiningNames(passages);   // titles + aliases
//   auto dict = EntityDictionary::Build(names);
//   auto out = extractor.Extract(passages, dict);
// Incremental insert of new documents: their names are collected into
// new_dict; the new passages get Extract(new_passages, dict of old and new
// names); the old passages get only the additions,
// LinkNewNames(old_passages, new_dict, &old_dict), which scans with a
// matcher built from the new names alone.
//
// Output order is deterministic: passages in input order; entities with the
// title first, then by first occurrence; triples by sentence, then by pair
// position. The same input gives the same output, byte for byte.
//
// Thread-safety: HeuristicExtractor and EntityDictionary are immutable;
// all methods are const and may run concurrently (e.g. on disjoint batches).
// Complexity: Extract is O(text + matches + sentences * k^2) for k =
// max_entities_per_sentence; building an EntityDictionary is O(total name
// tokens).
#ifndef FLOWRAG_EXTRACT_HEURISTIC_EXTRACTOR_H_
#define FLOWRAG_EXTRACT_HEURISTIC_EXTRACTOR_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/extraction.h"
#include "flowrag/status.h"
#include "lexical/aho_corasick.h"
#include "lexical/entity_spans.h"
#include "lexical/names.h"  // TitleAliases

namespace flowrag {

class HeuristicPassageRun;

// One passage to extract from. Views: the caller keeps the strings alive for
// the duration of the call.
struct PassageInput {
  int64_t passage_id = 0;
  std::string_view title;  // the document title, "" when untitled
  std::string_view text;   // the passage text, valid UTF-8
  int32_t ordinal = 0;     // position in its document; 0 is the title passage
};

// A known name: occurrences of `name` are links to entity `canonical`.
struct KnownName {
  std::string name;
  std::string canonical;  // "" means `name` itself
  std::string type;       // the canonical entity's type ("TITLE" for titles; "" when unknown)
};

// Known entity names and the matcher over them; an immutable value.
//
// Names are keyed by NameKey (so "Lothair II" and "lothair  II" are one
// name); canonical entities by NameKey of the canonical name (the first
// spelling and the first non-empty type given win). A canonical name is not
// linked unless it is also given as a name. Names that normalise to nothing,
// and one-token names that are a stopword or a single byte ("It", "A"), are
// not linked (they stay known to Lookup()). The capitalised tokens of a name
// must be capitalised where it is linked, except a leading "The" ("the
// Merrow Coast" links "The Merrow Coast").
class EntityDictionary {
 public:
  EntityDictionary() = default;  // empty: links nothing

  // O(total name tokens).
  static EntityDictionary Build(std::span<const KnownName> names);

  // Canonical names the (normalised) name links to, in insertion order; empty when unknown.
  std::vector<std::string_view> Lookup(std::string_view name) const;

  size_t num_names() const { return names_.size(); }
  size_t num_entities() const { return entities_.size(); }
  bool empty() const { return names_.empty(); }

 private:
  friend class HeuristicPassageRun;  // heuristic_extractor.cc

  struct Entity {
    std::string name;  // canonical spelling
    std::string key;   // NameKey(name)
    std::string type;
  };
  struct Name {
    uint32_t entity = 0;
    // Bit i set: token i of the name is capitalised, so the text's token must be too.
    uint64_t capitalised = 0;
    uint32_t tokens = 0;
  };

  std::vector<Entity> entities_;
  std::vector<Name> names_;  // TokenTrie payloads index this
  std::unordered_map<std::string, std::vector<uint32_t>> names_by_key_;
  TokenTrie matcher_;
};

struct HeuristicExtractorOptions {
  // Which spans become entities (proper nouns, dates and numbers: all on)
  // and the minimum proper-noun length in bytes (2).
  SpanOptions spans;
  // Link dictionary names (the Aho–Corasick pass).
  bool link_dictionary = true;
  // Per sentence, only the first this many distinct entities (by first
  // occurrence) form pairs: at most k(k-1)/2 facts, plus k title pairs.
  size_t max_entities_per_sentence = 8;
  // Pairs by proximity: each entity pairs with the next `pair_window`
  // entities of its sentence (by first occurrence), the title entity with
  // all of them; 0 = every pair. Measured (Recall@5 of ppr, offline): 1
  // keeps 2wiki-train 93.7 → 93.5, musique-train 68.4 → 69.8 with 39% fewer
  // facts (92,249 → 56,027 on 2wiki-train), which makes fact seeding and
  // every walk cheaper.
  size_t pair_window = 1;
  // Relation text of a fact. kPhrase: the words that introduce the later of
  // the two mentions in the sentence, at most max_relation_words ("silent
  // drama film directed by" for (Devotion, Guido Brignone)), so facts of one
  // sentence differ by what links them, as OpenIE predicates do; the
  // sentence when there are none. kSentence: always the whole sentence.
  enum class Relation { kPhrase, kSentence };
  Relation relation = Relation::kPhrase;
  size_t max_relation_words = 8;
  // Relation text cap, cut at a UTF-8 boundary.
  size_t max_relation_bytes = 300;
  // Entity description (first sentence of the title passage) cap.
  size_t max_description_bytes = 1000;
  // Pair the title entity with every entity of every sentence of its passages.
  bool title_pairs = true;
  // Also pair two literals (DATE/NUMBER), e.g. ("995", "997").
  bool pair_literals = false;
  // An alias shared by more entities than this links to none of them.
  size_t max_alias_candidates = 3;
  // CollectDefiningNames also registers TitleAliases(title) as names of the
  // title entity ("Theodred II (Bishop of Elmham)" → "Theodred II"), except
  // one-word bases of disambiguated titles ("Princess (2010 film)" does not
  // register "Princess"; its own passages still count "Princess" as the title).
  bool title_aliases = true;
};

// Totals of one call, for diagnostics.
struct HeuristicExtractStats {
  size_t passages = 0;
  size_t entities = 0;  // per-passage entities emitted
  size_t defining_entities = 0;
  size_t linked_mentions = 0;  // dictionary-link occurrences kept
  size_t triples = 0;
  double seconds = 0;
};

class HeuristicExtractor {
 public:
  HeuristicExtractor() = default;  // default options

  // Validates the options: max_entities_per_sentence >= 2,
  // max_relation_bytes >= 16, max_description_bytes >= 16,
  // max_alias_candidates >= 1, spans.max_span_tokens >= 1.
  static Result<HeuristicExtractor> Create(HeuristicExtractorOptions options);

  const HeuristicExtractorOptions& options() const { return options_; }

  // Pass 1: the names the passages define for linking: each distinct title
  // (type "TITLE") and, with title_aliases, its alias; in first-seen order.
  // O(passages).
  std::vector<KnownName> CollectDefiningNames(std::span<const PassageInput> passages) const;

  // Pass 2: one extraction per passage, in input order. Fails with
  // InvalidArgument naming the passage when a title or text is not valid UTF-8.
  Result<std::vector<PassageExtraction>> Extract(std::span<const PassageInput> passages,
                                                 const EntityDictionary& dictionary,
                                                 HeuristicExtractStats* stats = nullptr) const;

  // Both passes over one corpus.
  Result<std::vector<PassageExtraction>> ExtractCorpus(
      std::span<const PassageInput> passages, HeuristicExtractStats* stats = nullptr) const;

  // Incremental insert: links `new_names` into already extracted passages.
  // Returns, for each passage where a new name occurs, only the additions:
  // the new non-defining entities and the facts that involve at least one of
  // them (paired with the passage's title, detected spans, other new names
  // and, when `known` is given, the names it links). The delta is additive:
  // it never retracts an old mention, so a new longer name ("New York City")
  // does not remove an old shorter link ("New York"). A name already present
  // in the passage (its title or a detected span with the same key) is not
  // repeated. Passages without additions are omitted.
  Result<std::vector<PassageExtraction>> LinkNewNames(std::span<const PassageInput> passages,
                                                      const EntityDictionary& new_names,
                                                      const EntityDictionary* known = nullptr,
                                                      HeuristicExtractStats* stats = nullptr) const;

 private:
  explicit HeuristicExtractor(HeuristicExtractorOptions options) : options_(std::move(options)) {}

  Result<std::vector<PassageExtraction>> Run(std::span<const PassageInput> passages,
                                             const EntityDictionary* base,
                                             const EntityDictionary* added,
                                             HeuristicExtractStats* stats) const;

  HeuristicExtractorOptions options_;
};

}  // namespace flowrag

#endif  // FLOWRAG_EXTRACT_HEURISTIC_EXTRACTOR_H_
