// The offline answerer: picks the span of the top passages that answers
// about the question's subject, following a bridge entity when the question
// asks about something related to what it names. No model.
//
// Measurements below: offline stores, ppr retrieval, single pipeline, EM on
// 2wiki-train / hotpotqa-train / 2wiki (the first two are the tuning
// splits), each rule turned off alone; the full answerer scored 64.0 / 26.0
// / 47.5 and 11 of the 12 demo questions (bench/out/answers.md has every
// method and the cot pipeline).
//
// Sentences. Each sentence of the first `max_passages` passages matches the
// question's content terms (question_profile.h): the same word counts 1, a
// different form of it 0.8 ("directed"/"director"), a word of the same class
// (answer_lexicon.h: "established"/"founded", "birth"/"born") its class
// strength, and the words a text implies (answer_lexicon.h ImplicitWords: a
// life's "(1886 – 1960)" is born/died, "an English director" a nationality,
// "212 km" a length, a date a date) at the value they stand for (off: 51.0 /
// 26.0 / 47.5). Terms of the names the question mentions (subject terms)
// weigh `subject_weight` of their IDF: names say which passages to read, the
// rest says what is asked (1.0: 63.2 / 24.0 / 49.5; 0.7: 63.8 / 24.0 / 48.5;
// tuned on the first two). A passage's title terms count for each of its
// sentences (it speaks of its title as "It", "He"): fully when it is the
// entity the question names first (its primary subject: "How long is the
// River Ostrel from its source in the Hallam Hills?" asks about the river),
// at `title_weight` for other titles, and not at all for the terms of a name
// the passage is not about (the Ostrel Swing Bridge's title does not answer
// for the River Ostrel; off: 64.2 / 25.0 / 47.5). A question's alias counts
// as naming a title when the passage writes it and the title ends with the
// same word ("Gus Pell" for August Pell); a phrase the question writes in
// lower case names no passage ("place of birth").
//
// Bridges. A passage about an entity B the question does not name inherits
// the coverage of the best sentence elsewhere that mentions B while matching
// a relation term of the question (not a name's term, not the wh-phrase's
// noun "which town" or superlative "the largest"), weighted by how close B
// is to that term ("directed by X and starring Y" links X): "It was founded
// in 1947 by Corin Aske" carries {founded, Lantern Tide Festival} to Corin
// Aske's passage, where "He was born in Wrenfield" adds {born}. Up to
// `max_hops` links chain (a 3-hop question needs 2). A sentence scores the
// larger of its own coverage and own ∪ inherited (× chain_weight per hop),
// the chain only when the sentence adds a relation term the link lacks, or
// when B is what the question describes by a noun ("a garden located in
// which town" and the Vessey Botanical Garden); a chain is ranked by the
// best-ranked passage it went through (off: 46.0 / 18.0 / 38.6, demo 7 of
// 12; chain_weight 0.9 instead of 1: 63.0 / 26.0 / 47.5). Candidates of a
// chained sentence are measured against the terms it adds (the attribute
// asked about B); B, or part of its name, is never the answer there, and B
// is no answer where its own passage goes further. Coverage is the
// IDF-weighted share of the question's terms, times the rank prior 1 / (1 +
// rank_decay·rank).
//
// Answers. Candidate spans are the proper-noun, date and number spans
// (lexical/entity_spans.h) of the best sentences (and each part of an "A of
// B" name), plus passage titles, that the question does not name; each
// scores its sentence's score × how well its kind fits the question ×
// closeness to the terms it is measured against (a passive agent, "built by
// X", counts as adjacent (a bonus of 1.25 over adjacency: 63.2 / 25.0 /
// 47.5); a word inside the candidate does not; a weak implied word sits 10
// bytes from its value, so "96 metres long" beats the "58 metres" that only
// could be a length) × 0.5 when the sentence matches only names (off: 63.8 /
// 25.0 / 47.5) × 0.5 for a name the question describes by a relation noun
// ("Vessey Botanical Garden" for "the garden": a step, not the answer; off:
// demo q02 lost) × 1.3 for a name ending with the answer noun ("Santa Clara
// County" for "which county"; no effect on the three, it decides a
// schema-agent hop), summed over repeats (the best counts fully, the others
// `repeat_weight`). "How many" answers drop the counted word ("1,820 seats"
// → "1,820").
//
// Comparisons answer a sub-question per option (the question with that
// option alone, its names required): "which came first / later" by dates,
// through bridges when the question asks about a related entity ("the film
// whose director was born later"), compared at the precision both have; "who
// lived longer" by death minus birth; "which singer is American" and "are A
// and B both American / of the same nationality" by NationalityKey. Two
// values reached through different numbers of bridges are not compared; the
// bridge the weaker option lacks is offered instead. Other yes/no questions
// answer "yes".
//
// Graph hints: entity names the graph retrieval scored (best first) order
// the bridges offered to an iterative pipeline (among those whose link
// scores at least half the best link's).
//
// Pure and thread-safe; O(sentences² + total length of the passages read)
// per question (a comparison runs two to four sub-questions).
#ifndef FLOWRAG_AGENT_EXTRACTIVE_H_
#define FLOWRAG_AGENT_EXTRACTIVE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/question_profile.h"
#include "flowrag/types.h"

namespace flowrag {

struct ExtractiveOptions {
  size_t max_passages = 5;    // passages read (the answer's context)
  double title_weight = 0.7;  // a question term found only in the title
  double rank_decay = 0.25;
  double repeat_weight = 0.2;
  size_t long_sentences = 3;    // style "long": sentences quoted
  double chain_weight = 1.0;    // coverage factor per bridge hop
  size_t max_hops = 2;          // bridges chained (a 3-hop question needs 2)
  double subject_weight = 0.5;  // IDF factor of the terms of names the question mentions
};

// IDF of a tokenised term (the store's BM25 statistics); null = every term 1.
using IdfFunction = std::function<double(std::string_view term)>;

// A sentence of an input passage: [begin, end) byte offsets into its text.
struct SentenceRef {
  size_t passage = 0;
  uint32_t begin = 0;
  uint32_t end = 0;
  double coverage = 0.0;  // weighted share of question terms, in [0, 1]
};

struct ExtractiveAnswer {
  std::string answer;                // the span, "yes"/"no", an option, or the best sentence
  bool answered = false;             // false when no passage supports anything
  double confidence = 0.0;           // coverage of the supporting sentence × kind fit, in [0, 1]
  std::string reasoning;             // how the answer was chosen, in one line
  std::vector<SentenceRef> support;  // best first; [0] supports the answer
  // support[0, evidence) is what the answer rests on: the answer's sentence,
  // then the links of the bridges it went through (or, for a comparison,
  // each option's sentence). The rest are further well-matching sentences.
  size_t evidence = 1;
  // For iterative pipelines: question terms the supporting sentence (and its
  // title and bridge link) lacks; names the best sentences link to with a
  // relation term of the question but no passage of the context is about
  // (bridges to retrieve), best first; and the bridge the answer went
  // through ("" when it answered directly).
  std::vector<std::string> unmatched_terms;
  std::vector<std::string> bridges;
  std::string bridge_used;
};

// `exclude`: names never returned as the answer (e.g. earlier bridges).
// `long_form`: the answer is the best sentences, each followed by "[n]"
// (n = 1-based passage position). `graph_entities`: entity names the
// retrieval scored, best first (empty for text retrievers).
ExtractiveAnswer ExtractAnswer(std::string_view question,
                               const std::vector<ScoredPassage>& passages, const IdfFunction& idf,
                               const std::vector<std::string>& exclude = {},
                               const ExtractiveOptions& options = {}, bool long_form = false,
                               const std::vector<std::string>& graph_entities = {});

}  // namespace flowrag

#endif  // FLOWRAG_AGENT_EXTRACTIVE_H_
