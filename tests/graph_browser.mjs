// Drives the viewer's graph browser in headless Chromium over the DevTools
// protocol (--remote-debugging-pipe: JSON messages separated by NUL bytes on
// file descriptors 3 and 4; no npm package needed), as a user would: types
// an entity name and presses Find, clicks the first result, clicks a
// neighbour node to expand it, clicks a fact edge, and reads what the page
// shows. Real mouse and keyboard events throughout. Prints one JSON object
// (what each step found) and saves a screenshot. Used by
// tests/graph_browser_test.cc.
//
//   node graph_browser.mjs CHROMIUM URL ENTITY SCREENSHOT.png PROFILE_DIR
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";

const [chromium, url, entity, screenshot, profile] = process.argv.slice(2);
const browser = spawn(chromium, [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
  "--disable-extensions", "--disable-background-networking", "--disable-component-update",
  "--disable-sync", "--hide-scrollbars", "--mute-audio", "--remote-debugging-pipe",
  "--user-data-dir=" + profile, "about:blank",
], { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] });
let log = "";
browser.stderr.on("data", (d) => { log = (log + d).slice(-4000); });

const pending = new Map();
let nextId = 1;
let input = Buffer.alloc(0);
browser.stdio[4].on("data", (chunk) => {
  input = Buffer.concat([input, chunk]);
  let end;
  while ((end = input.indexOf(0)) >= 0) {
    const msg = JSON.parse(input.subarray(0, end).toString("utf8"));
    input = input.subarray(end + 1);
    if (msg.id && pending.has(msg.id)) {
      const { resolve, reject, method } = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) reject(new Error(method + ": " + msg.error.message));
      else resolve(msg.result);
    }
  }
});
function send(method, params = {}, sessionId) {
  const id = nextId++;
  const msg = { id, method, params };
  if (sessionId) msg.sessionId = sessionId;
  browser.stdio[3].write(JSON.stringify(msg) + "\0");
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let session;
const page = (method, params) => send(method, params, session);
async function evaluate(expression) {
  const r = await page("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true });
  if (r.exceptionDetails) throw new Error("evaluate " + expression + ": " + JSON.stringify(r.exceptionDetails));
  return r.result.value;
}
async function waitFor(expression, what, ms = 20000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const v = await evaluate(expression);
    if (v) return v;
    await sleep(100);
  }
  throw new Error("timed out waiting for " + what + "; page status: " +
                  (await evaluate("document.getElementById('browser-status').textContent")));
}
async function click(x, y) {
  for (const type of ["mouseMoved", "mousePressed", "mouseReleased"]) {
    await page("Input.dispatchMouseEvent", { type, x, y, button: "left", buttons: type === "mousePressed" ? 1 : 0,
                                              clickCount: type === "mouseMoved" ? 0 : 1 });
    await sleep(30);
  }
}
// The page coordinates of the centre of the element `selector` selects.
const centreOf = (selector) => evaluate(`(() => { const r = document.querySelector(${JSON.stringify(selector)})
    .getBoundingClientRect(); return { x: r.left + r.width / 2, y: r.top + r.height / 2 }; })()`);
const done = "document.getElementById('graph-browser').dataset.state === 'done'";

async function main() {
  const { targetId } = await send("Target.createTarget", { url: "about:blank" });
  ({ sessionId: session } = await send("Target.attachToTarget", { targetId, flatten: true }));
  await page("Page.enable");
  await page("Runtime.enable");
  await page("Emulation.setDeviceMetricsOverride", { width: 1400, height: 1900, deviceScaleFactor: 1, mobile: false });
  await page("Page.navigate", { url });
  await waitFor("document.readyState === 'complete' && typeof cytoscape !== 'undefined'", "the page and cytoscape");
  const out = {};

  // 1. Search: type the name, press Find.
  const box = await centreOf("#entity-q");
  await click(box.x, box.y);
  await page("Input.insertText", { text: entity });
  const go = await centreOf("#entity-go");
  await click(go.x, go.y);
  await waitFor(done + " && document.querySelectorAll('#entity-results li[data-id]').length > 0", "search results");
  out.search = await evaluate(`({ status: document.getElementById('browser-status').textContent,
      results: [...document.querySelectorAll('#entity-results li[data-id]')].map((li) => li.textContent) })`);

  // 2. Open the first result.
  const first = await centreOf("#entity-results li[data-id]");
  await click(first.x, first.y);
  await waitFor(done + " && Number(document.getElementById('cy').dataset.nodes) > 1", "the neighbourhood");
  out.open = await evaluate(`({ nodes: Number(document.getElementById('cy').dataset.nodes),
      edges: Number(document.getElementById('cy').dataset.edges),
      center: window.flowragGraph.nodes('.center').data('name'),
      detail: document.getElementById('detail-title').textContent })`);

  // 3. Click a neighbour node (the one with most facts): it expands.
  const target = await evaluate(`(() => { const cy = window.flowragGraph;
      const n = cy.nodes().not('.expanded').sort((a, b) => b.data('facts') - a.data('facts'))[0];
      const p = n.renderedPosition(), r = document.getElementById('cy').getBoundingClientRect();
      return { id: n.id(), name: n.data('name'), x: r.left + p.x, y: r.top + p.y }; })()`);
  await click(target.x, target.y);
  await waitFor(done + ` && window.flowragGraph.getElementById(${JSON.stringify(target.id)}).hasClass('expanded')`,
                "the expanded node");
  out.expand = await evaluate(`({ node: ${JSON.stringify(target.name)},
      nodes: Number(document.getElementById('cy').dataset.nodes),
      edges: Number(document.getElementById('cy').dataset.edges),
      detail: document.getElementById('detail-title').textContent,
      status: document.getElementById('browser-status').textContent })`);

  // 4. Click a fact edge at its midpoint: the passages behind it.
  const edges = await evaluate(`(() => { const cy = window.flowragGraph, r = document.getElementById('cy').getBoundingClientRect();
      return cy.edges('[kind = "RELATED_TO"]').map((e) => { const m = e.renderedMidpoint();
        return { id: e.id(), x: r.left + m.x, y: r.top + m.y }; })
        .filter((e) => e.x > r.left + 5 && e.x < r.right - 5 && e.y > r.top + 5 && e.y < r.bottom - 5); })()`);
  out.edge = null;
  for (const e of edges.slice(0, 12)) {
    await click(e.x, e.y);
    const got = await waitFor(`(${done} && document.getElementById('provenance').dataset.fact) ||
        (document.getElementById('graph-browser').dataset.state === 'error' && 'error')`, "the passages", 8000)
        .catch(() => null);
    if (got && got !== "error") {
      out.edge = await evaluate(`({ clicked: ${JSON.stringify(e.id)},
          fact: document.getElementById('provenance').dataset.fact,
          title: document.getElementById('detail-title').textContent,
          meta: document.getElementById('detail-meta').textContent,
          passages: [...document.querySelectorAll('#provenance li')].map((li) => li.textContent) })`);
      break;
    }
  }
  const shot = await page("Page.captureScreenshot", { format: "png" });
  writeFileSync(screenshot, Buffer.from(shot.data, "base64"));
  out.screenshot = screenshot;
  return out;
}

const timer = setTimeout(() => { console.log(JSON.stringify({ error: "timeout (90 s)", log })); process.exit(1); }, 90000);
main().then((out) => {
  console.log(JSON.stringify(out));
  clearTimeout(timer);
  send("Browser.close").catch(() => {});
  setTimeout(() => { browser.kill(); process.exit(0); }, 500);
}, (e) => {
  console.log(JSON.stringify({ error: String(e && e.message || e), log }));
  browser.kill();
  process.exit(1);
});
