// Follow-up questions of a chat as standalone retrieval queries.
//
// A chat front-end sends the user's last message as it was typed: "Where
// was he born?" after "Who designed the Brannock lens?". Retrieved on its
// own words it finds nothing about the person. RewriteFollowUp turns it into
// the question the user means ("Where was Ivo Brannock born?"), which the
// chat endpoint retrieves and answers with (server/routes_chat.cc).
//
// Offline (no model):
//  * A follow-up holds a reference the question does not resolve itself: a
//    personal or possessive pronoun (he him his, she her, it its, they them
//    their), a locative "there" (not "is there", "there was"), a bare
//    "this"/"that" ("Why did that happen?"), or a demonstrative or definite
//    noun phrase whose noun heads a name of the conversation ("that lens",
//    "the lighthouse" after Greymantle Lighthouse; the definite form only in
//    a question that names nothing). Or it is an ellipsis: a lone wh-phrase
//    ("When?", "How many?"), "what about X?" / "how about X?", or a short
//    fragment that starts with no question word, auxiliary, imperative or
//    subject pronoun ("And in 1894?", "And the Vey propeller?", "His
//    father?"). A pronoun after a name of the question that agrees with it
//    is bound there ("Where was Ivo Brannock born and when did he die?");
//    expletive "it" ("how long did it take", "is it true") is no reference.
//    A question with neither stays as it is.
//  * Candidates are the entities of the earlier turns: the names the
//    previous answer adds to its question (what it answered), then the names
//    of the previous question, the titles the previous answer cites (its
//    "Sources:" list) and the titles a keyword search ranks first for the
//    previous question; each turn further back counts half. Names in a text
//    are the passage titles it writes (case aside: "the Brannock lens" is
//    the passage "Brannock Lens") and its capitalised spans
//    (lexical/entity_spans.h). Earlier user messages are resolved first, in
//    order, so the third turn's "he" can stand for the name the second
//    turn's "he" stood for.
//  * Agreement. Each candidate's gender and number are read off the
//    passages about it: those it is the title of (which third-person
//    pronouns they use, a sentence-initial one counting double), else the
//    first pronoun after each mention elsewhere (not inside a longer name:
//    "Merrow" in "Merrow Coast"); a class seen once is a hint, seen twice or
//    more sure. A life's parenthesis "(1831–1902)" marks a person; "in X" /
//    "at X" and place words in the name or the lead ("River", "Isle", "is a
//    village") a place; group words a group ("is a rowing club"); the
//    graph's entity type when an LLM extractor gave one (PERSON, LOCATION,
//    ORGANIZATION ...); and the previous question's wh-word its answer
//    ("Who designed X?": a person, "Where": a place; not "Who was X?",
//    whose answer describes X). "he" binds to a male or unknown candidate,
//    "she" to a female or unknown one, "it" and "that" to a thing or place,
//    "there" to a place, "they" prefers a plural or a group. A demonstrative
//    noun ("that foundry") must head the name or describe it (its lead, or
//    an apposition: "Sandvik & Sons, a foundry in Tornby").
//  * The best candidate has the highest salience × agreement² × (0.5 + the
//    share of the question's other words its own passages hold): squared,
//    a sure agreement outweighs a guess's salience; the words let "When was
//    it patented?" prefer the patented lamp to the village named more
//    recently. None agreeing leaves the reference as it is.
//  * Rewriting: the reference becomes the candidate as the conversation
//    wrote it ("he" → "Ivo Brannock", "his" → "Ivo Brannock's", "it" → "the
//    Brannock lens", "there" → "in Saltinghame"), or, known only by a
//    title, as its passage writes it ("Vey Propeller" → "the Vey
//    propeller"). "what about X?" and a noun-phrase fragment put X in place
//    of the previous question's name that agrees with it best; a date or
//    prepositional fragment replaces the previous question's date with its
//    preposition, or is added to it; a lone wh-phrase replaces the previous
//    question's ("Where was X born?" + "When?" → "When was X born?"; "Who
//    designed X?" + "When?" → "When was X designed?"; "What did X discover?"
//    + "When?" → "When did X discover <the previous answer>?").
//
// With a chat model: when the offline reading finds the question is not
// self-contained (a reference, an ellipsis, or no name of its own) and there
// are earlier turns, the model rewrites it from the last turns (a short
// prompt, FollowUpPrompt). Its reply must be one line (after an optional
// label such as "Standalone question:" and quotes), not empty, not JSON, not
// cut off, and at most max_query_bytes (or twice the question); otherwise,
// or when the call fails, the offline rewrite is used and a warning says why.
//
// Thread-safety: pure apart from the callbacks and the model, which must be
// safe to call from the calling thread. Cost: a keyword search per earlier
// turn read and per candidate whose agreement is needed (at most
// max_candidates per turn), each cached for the call.
#ifndef FLOWRAG_AGENT_FOLLOWUP_H_
#define FLOWRAG_AGENT_FOLLOWUP_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/models.h"
#include "flowrag/status.h"
#include "flowrag/types.h"
#include "llm/chat_model.h"

namespace flowrag {

// What the rewriter may ask the store. Both may be null (then it knows only
// the conversation's text).
struct FollowUpLookup {
  // Passages for `text`, best first, at most `k` (a keyword search: BM25).
  // An error counts as no passages.
  std::function<Result<std::vector<ScoredPassage>>(std::string_view text, size_t k)> passages;
  // The knowledge graph's type of the entity named `name` ("PERSON",
  // "LOCATION", "ORGANIZATION", ...; "" when unknown or untyped).
  std::function<std::string(std::string_view name)> entity_type;
};

struct FollowUpOptions {
  size_t max_turns = 4;        // earlier user messages read (the most recent)
  size_t max_candidates = 6;   // candidates per turn whose agreement is read
  size_t lookup_passages = 5;  // passages per keyword search
  // A model's rewrite longer than this (or than twice the question,
  // whichever is larger) is refused.
  size_t max_query_bytes = 1000;
  // A question longer than this is not a follow-up (left as it is); earlier
  // messages are read up to it (bounds the work on any input).
  size_t max_text_bytes = 2000;
  size_t max_references = 8;          // references resolved in one question
  size_t prompt_turns = 6;            // earlier user and assistant messages shown to the model
  size_t prompt_message_bytes = 600;  // each cut to this
};

// One reference the offline rewrite replaced.
struct ResolvedReference {
  std::string text;    // as the question wrote it: "he", "his", "that lens", "what about"
  std::string target;  // what it became: "Ivo Brannock", "Ivo Brannock's"
};

struct QueryRewrite {
  std::string query;  // the retrieval query; the question itself when unchanged
  // "none": unchanged (self-contained, or the first turn); "offline"; "llm".
  std::string method = "none";
  std::vector<ResolvedReference> references;  // offline: what was replaced
  std::string reason;                         // one line: why this query
  std::vector<std::string> warnings;          // e.g. the model's rewrite was refused
  TokenUsage usage;                           // the model call, if any
  bool rewritten() const { return method != "none"; }
};

// The offline rewrite of `question` given the `earlier` messages (oldest
// first; "system" messages are ignored, an "assistant" message answers the
// user message before it).
QueryRewrite RewriteFollowUpOffline(std::string_view question,
                                    const std::vector<ChatMessage>& earlier,
                                    const FollowUpLookup& lookup,
                                    const FollowUpOptions& options = {});

// The model's rewrite when `chat` is set and the question needs the
// conversation (see above), else the offline one. `prices` (may be null)
// prices the model call into QueryRewrite::usage.cost_usd.
QueryRewrite RewriteFollowUp(std::string_view question, const std::vector<ChatMessage>& earlier,
                             const FollowUpLookup& lookup, ChatModel* chat,
                             const FollowUpOptions& options = {});

// The prompt RewriteFollowUp sends (system, then user with the last turns).
std::vector<ChatMessage> FollowUpPrompt(std::string_view question,
                                        const std::vector<ChatMessage>& earlier,
                                        const FollowUpOptions& options = {});

// A model's reply as a query: label and quotes removed; InvalidArgument
// saying what is wrong with it (empty, several lines, JSON, too long).
Result<std::string> ReadModelRewrite(std::string_view reply, std::string_view question,
                                     const FollowUpOptions& options = {});

// An assistant message of this API split into its answer and the titles its
// "Sources:" list cites ("[1] Title (document id)").
struct AssistantTurn {
  std::string answer;
  std::vector<std::string> cited_titles;
};
AssistantTurn ReadAssistantTurn(std::string_view content);

}  // namespace flowrag

#endif  // FLOWRAG_AGENT_FOLLOWUP_H_
