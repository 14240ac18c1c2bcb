// The MCP test client: the official TypeScript SDK's Client drives a flowrag
// MCP server and prints one JSON object of what it saw (tests/mcp_client_test.cc
// asserts on it; doc/mcp.md).
//
//   node js/clients/mcp_client.mjs stdio FLOWRAG_BINARY DB [--page-size N] [--repeat N]
//   node js/clients/mcp_client.mjs http URL [--token T] [--repeat N]
//   (--latency-method M: the method of the timed query calls, default bm25)
//
// It lists the tools and every page of resources, reads a resource, calls
// each tool (query, ask, index_text, query again, delete, stats), checks an
// unknown tool (a JSON-RPC error) and wrong arguments (an isError result),
// and times `repeat` query calls (milliseconds as the client sees them, and
// the engine's own time_ms of each).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

function option(args, name, fallback) {
  const at = args.indexOf(name);
  return at >= 0 && at + 1 < args.length ? args[at + 1] : fallback;
}

function transportFor(argv) {
  const [mode, target, ...rest] = argv;
  if (mode === 'stdio') {
    const db = rest[0];
    const args = ['mcp', '--db', db];
    const pageSize = option(rest, '--page-size', null);
    if (pageSize) args.push('--page-size', pageSize);
    return new StdioClientTransport({ command: target, args, stderr: 'pipe' });
  }
  if (mode === 'http') {
    const token = option(rest, '--token', null);
    const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
    return new StreamableHTTPClientTransport(new URL(target), { requestInit });
  }
  throw new Error(`usage: mcp_client.mjs stdio BINARY DB | http URL [--token T]`);
}

function firstText(result) {
  const item = (result.content ?? []).find((c) => c.type === 'text');
  return item ? item.text : '';
}

// A tool call's outcome: the result, or the JSON-RPC error it raised.
async function call(client, name, args) {
  try {
    const result = await client.callTool({ name, arguments: args });
    return {
      isError: result.isError === true,
      text: firstText(result),
      structured: result.structuredContent ?? null,
      links: (result.content ?? []).filter((c) => c.type === 'resource_link').map((c) => c.uri),
    };
  } catch (e) {
    return { rpcError: { code: e.code ?? null, message: String(e.message ?? e) } };
  }
}

async function allResources(client) {
  const resources = [];
  let cursor;
  let pages = 0;
  do {
    const page = await client.listResources(cursor ? { cursor } : {});
    resources.push(...page.resources);
    cursor = page.nextCursor;
    pages += 1;
  } while (cursor && pages < 1000);
  return { resources, pages };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function main() {
  const argv = process.argv.slice(2);
  const repeat = Number(option(argv, '--repeat', '5'));
  const transport = transportFor(argv);
  let stderr = '';
  if (transport.stderr) transport.stderr.on('data', (d) => { stderr += d.toString(); });
  const client = new Client({ name: 'flowrag-mcp-test', version: '1.0.0' });
  await client.connect(transport);
  const out = {
    server: client.getServerVersion(),
    protocolVersion: transport.protocolVersion ?? null,
    capabilities: client.getServerCapabilities(),
    instructions: client.getInstructions() ?? null,
  };

  await client.ping();
  const tools = (await client.listTools()).tools;
  out.tools = tools.map((t) => ({
    name: t.name,
    required: t.inputSchema.required ?? [],
    hasOutputSchema: Boolean(t.outputSchema),
    described: (t.description ?? '').length > 20,
  }));

  const { resources, pages } = await allResources(client);
  out.resources = { count: resources.length, pages, first: resources[0] ?? null };
  out.templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
  if (resources.length > 0) {
    const read = await client.readResource({ uri: resources[0].uri });
    const c = read.contents[0];
    out.read = { uri: c.uri, mimeType: c.mimeType, length: (c.text ?? '').length };
  }
  try {
    await client.readResource({ uri: 'flowrag://documents/no-such-document' });
    out.readMissing = { ok: true };
  } catch (e) {
    out.readMissing = { code: e.code ?? null, message: String(e.message ?? e) };
  }

  const question = 'How long is the River Ostrel?';
  out.query = await call(client, 'query', { question, method: 'bm25', top_k: 3 });
  out.queryParams = await call(client, 'query', {
    question, method: 'bm25', top_k: 2, params: { 'bm25.k1': 0.9 },
  });
  out.ask = await call(client, 'ask', {
    question: 'In which town was the man who founded the Lantern Tide Festival born?',
    pipeline: 'cot',
  });
  out.index = await call(client, 'index_text', {
    id: 'mcp/zephyr.md',
    title: 'Zephyr Quarry',
    text: 'The Zephyr Quarry near Hollin Bay produced blue slate from 1871 until 1932.',
  });
  out.queryNew = await call(client, 'query', { question: 'Zephyr Quarry blue slate', method: 'bm25', top_k: 1 });
  out.delete = await call(client, 'delete', { ids: ['mcp/zephyr.md'] });
  out.deleteAgain = await call(client, 'delete', { ids: ['mcp/zephyr.md'] });
  out.stats = await call(client, 'stats', {});

  out.unknownTool = await call(client, 'no_such_tool', {});
  out.wrongType = await call(client, 'query', { question, top_k: 'ten' });
  out.missingField = await call(client, 'ask', { pipeline: 'cot' });
  out.badMethod = await call(client, 'query', { question, method: 'nope' });
  out.badParam = await call(client, 'query', { question, method: 'bm25', params: { 'bm25.nope': 1 } });

  const method = option(argv, '--latency-method', 'bm25');
  const times = [];
  const engineTimes = [];
  for (let i = 0; i < repeat; i++) {
    const start = process.hrtime.bigint();
    const r = await client.callTool({ name: 'query', arguments: { question, method, top_k: 5 } });
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (r.structuredContent) engineTimes.push(r.structuredContent.time_ms);
  }
  out.latency = {
    method,
    calls: repeat,
    medianMs: times.length ? median(times) : null,
    engineMedianMs: engineTimes.length ? median(engineTimes) : null,
    ms: times,
  };

  await client.close();
  out.stderrHasLog = stderr.includes('flowrag mcp');
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stdout.write(JSON.stringify({ fatal: String(e.stack ?? e) }) + '\n');
  process.exit(1);
});
