// Drives a flowrag server with the official OpenAI client library, as a chat
// front-end would: lists the models, asks a question (plain and streamed),
// and sends a bad request. Prints one JSON object with what it saw, for
// tests/openai_client_test.cc to check.
//
//   node js/clients/openai_chat.mjs http://127.0.0.1:PORT/v1 [question]
import OpenAI from "openai";

const [baseURL, question = "Who kept the harbour log of Port Calder?"] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: process.env.FLOWRAG_TOKEN ?? "unused", maxRetries: 0 });
const out = {};

const models = await client.models.list();
out.models = models.data.map((m) => m.id);

const messages = [
  { role: "system", content: "Answer from the documents." },
  { role: "user", content: question },
];
const t0 = performance.now();
const completion = await client.chat.completions.create({ model: "flowrag-qafd", messages });
out.plain = {
  ms: performance.now() - t0,
  content: completion.choices[0].message.content,
  finish_reason: completion.choices[0].finish_reason,
  citations: completion.flowrag?.citations?.length ?? -1,
  usage: completion.usage,
};

const t1 = performance.now();
const stream = await client.chat.completions.create({
  model: "flowrag-qafd", messages, stream: true, stream_options: { include_usage: true },
});
let content = "";
let chunks = 0;
let first_ms = -1;
let finish = null;
let usage = null;
for await (const chunk of stream) {
  chunks += 1;
  if (chunk.usage) usage = chunk.usage;
  const choice = chunk.choices[0];
  if (!choice) continue;
  const piece = choice.delta?.content ?? "";
  if (piece && first_ms < 0) first_ms = performance.now() - t1;
  content += piece;
  if (choice.finish_reason) finish = choice.finish_reason;
}
out.streamed = { chunks, content, finish_reason: finish, first_token_ms: first_ms,
                 ms: performance.now() - t1, usage };

try {
  await client.chat.completions.create({ model: "flowrag-qafd", messages: [{ role: "system", content: "x" }] });
  out.error = null;
} catch (e) {
  out.error = { status: e.status, message: e.message, param: e.param ?? e.error?.param ?? null };
}
try {
  await client.chat.completions.create({ model: "no-such-model", messages });
  out.unknown_model = null;
} catch (e) {
  out.unknown_model = { status: e.status, code: e.code ?? e.error?.code ?? null };
}
console.log(JSON.stringify(out));
