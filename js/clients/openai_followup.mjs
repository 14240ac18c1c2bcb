// A two-turn conversation with a flowrag server through the official OpenAI
// client library, as a chat front-end sends it: the first answer goes back
// as the assistant turn, then a follow-up question. Prints one JSON object
// with what it saw (plain and streamed), for tests/server_followup_test.cc.
//
//   node js/clients/openai_followup.mjs http://127.0.0.1:PORT/v1 "first question" "follow-up"
import OpenAI from "openai";

const [baseURL, first, followUp] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: process.env.FLOWRAG_TOKEN ?? "unused", maxRetries: 0 });
const model = "flowrag";

const turn1 = await client.chat.completions.create({
  model, messages: [{ role: "user", content: first }],
});
const messages = [
  { role: "user", content: first },
  { role: "assistant", content: turn1.choices[0].message.content },
  { role: "user", content: followUp },
];

const plain = await client.chat.completions.create({ model, messages });
const out = {
  first: turn1.choices[0].message.content,
  plain: {
    content: plain.choices[0].message.content,
    finish_reason: plain.choices[0].finish_reason,
    retrieval_query: plain.flowrag?.retrieval_query ?? null,
    documents: (plain.flowrag?.retrieval?.passages ?? []).map((p) => p.document_id),
  },
};

const stream = await client.chat.completions.create({ model, messages, stream: true });
let content = "";
let firstQuery = null;
let lastQuery = null;
let finish = null;
for await (const chunk of stream) {
  if (chunk.flowrag?.retrieval_query !== undefined) {
    if (firstQuery === null) firstQuery = chunk.flowrag.retrieval_query;
    lastQuery = chunk.flowrag.retrieval_query;
  }
  const choice = chunk.choices[0];
  if (!choice) continue;
  content += choice.delta?.content ?? "";
  if (choice.finish_reason) finish = choice.finish_reason;
}
out.streamed = { content, finish_reason: finish, first_query: firstQuery, last_query: lastQuery };
console.log(JSON.stringify(out));
