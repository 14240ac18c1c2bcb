// The offline answerer: picks the span of the top passages that answers
// about the question's subject, following a bridge entity when the
// question asks about something related to what it names. No model.
//
// Sentences. Each sentence of the first `max_passages` passages matches the
// question's content terms (question_profile.h): the same word counts 1, a
// different form of it 0.8 ("directed"/"director"), a word of the same
// class (answer_lexicon.h: "established"/"founded", "birth"/"born") its
// class strength, and the words a biography lead implies ("Name (1886 –
// 1960)" → born, died; "an English director" → nationality) at the value
// they stand for. A passage's title terms count for each of its sentences
// (it speaks of its title as "It", "He"): fully when the question names the
// title, at `title_weight` otherwise, and not at all for the terms of an
// entity the question names that this passage is not about (the subject
// rule: "How long is the River Ostrel?" is not answered by the Ostrel Swing
// Bridge's length, though its title shares "Ostrel").
//
// Bridges. A passage about an entity B the question does not name inherits
// the coverage of the best sentence elsewhere that mentions B while
// matching a relation term of the question (a term outside the names):
// "It was founded in 1947 by Corin Aske" carries {founded, Lantern Tide
// Festival} to Corin Aske's passage, where "He was born in Wrenfield" adds
// {born}. A sentence scores the larger of its own coverage and the chained
// coverage (own ∪ inherited, × chain_weight per hop, up to max_hops), the
// chain only when the sentence adds a term the link lacks; candidates of a
// chained sentence are measured against those new terms (the attribute
// asked about B), and B itself is never the answer. Coverage is the
// IDF-weighted share of the question's terms, times the rank prior
// 1 / (1 + rank_decay·rank) (a chain takes the better of its two passages').
//
// Answers. Candidate spans are the proper-noun, date and number spans
// (extract/entity_spans.h) of the best sentences, plus passage titles, that
// the question does not name; each scores its sentence's score × how well
// its kind fits the question × closeness to the matched terms (a passive
// agent, "built by X", counts as adjacent), summed over repeats (the best
// counts fully, the others `repeat_weight`). "How many" answers drop the
// counted word ("1,820 seats" → "1,820"). Choice questions ("A or B")
// answer a sub-question per option (the question with that option alone)
// for a date, through bridges when the question asks about a related
// entity ("the film whose director was born later"), and pick the
// earliest/latest as asked. Yes/no questions about the same nationality or
// country compare the two entities' values (NationalityKey); other yes/no
// questions answer "yes".
//
// Graph hints: entity names the graph retrieval scored (best first) rank
// the bridges offered to an iterative pipeline for its follow-up.
//
// Pure and thread-safe; O(sentences² + total length of the passages read)
// per question (sub-questions at most twice that).
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
  size_t long_sentences = 3;  // style "long": sentences quoted
  double chain_weight = 1.0;  // coverage factor per bridge hop
  size_t max_hops = 2;        // bridges chained (a 3-hop question needs 2)
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
