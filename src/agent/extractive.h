// The offline answerer: picks the best-supported span (or sentence) of the
// top passages, with no model.
//
// Sentences of the first `max_passages` passages are scored by the IDF-
// weighted share of the question's content terms they contain (terms found
// only in the passage title count `title_weight`, or fully when the question
// names the title), times a rank prior
// 1 / (1 + rank_decay·rank). Candidate answers are the proper-noun, date and
// number spans (extract/entity_spans.h) of the best sentences, plus passage
// titles, that the question does not already name; each scores its
// sentence's score × how well its kind fits the question (question_profile.h)
// × closeness to the matched question terms, summed over repeats (the best
// counts fully, the others `repeat_weight`). Yes/no questions answer "yes";
// choice questions ("A or B") pick the option whose passage date is the
// earliest/latest as asked, else the better-supported option.
//
// Pure and thread-safe; O(total length of the passages read).
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
  std::string answer;                // the span, "yes", an option, or the best sentence
  bool answered = false;             // false when no passage supports anything
  double confidence = 0.0;           // coverage of the supporting sentence × kind fit, in [0, 1]
  std::string reasoning;             // how the answer was chosen, in one line
  std::vector<SentenceRef> support;  // best first; [0] supports the answer
  // For iterative pipelines: question terms the supporting sentence (and its
  // title) lacks, and names the best sentences mention that the question
  // does not (bridge entities), best first.
  std::vector<std::string> unmatched_terms;
  std::vector<std::string> bridges;
};

// `exclude`: names never returned as the answer (e.g. earlier bridges).
// `long_form`: the answer is the best sentences, each followed by "[n]"
// (n = 1-based passage position).
ExtractiveAnswer ExtractAnswer(std::string_view question,
                               const std::vector<ScoredPassage>& passages, const IdfFunction& idf,
                               const std::vector<std::string>& exclude = {},
                               const ExtractiveOptions& options = {}, bool long_form = false);

}  // namespace flowrag

#endif  // FLOWRAG_AGENT_EXTRACTIVE_H_
