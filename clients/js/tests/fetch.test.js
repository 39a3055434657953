// consoleFetch on the chat path: what it captures, and that the caller sees what it would see
// without it (same bytes, same errors, no wait).

import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, test } from "node:test";

import { consoleFetch, counters, flush, shutdown, withConversation } from "../src/index.js";
import { SSE, anthropicMessage, anthropicStream, fakeConsole, fakeProvider } from "./fakes.js";

const spool = () => mkdtempSync(path.join(tmpdir(), "console-client-js-"));
const quiet = { error() {}, warn() {}, info() {}, debug() {} };
const cleanup = [];
afterEach(async () => {
  await shutdown(1);
  for (const close of cleanup.splice(0)) await close();
});

async function world(reply, answer) {
  const provider = await fakeProvider(reply);
  const console = await fakeConsole(answer);
  cleanup.push(provider.close, console.close);
  const fetch = consoleFetch({ url: console.url, token: "tok", spoolDir: spool(), logger: quiet });
  return { provider, console, fetch };
}

const ask = (fetch, url, body = '{"model":"m","stream":true,  "messages":[{"role":"user","content":"Où est mon colis ?"}]}') =>
  fetch(`${url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body });

test("a stream: the caller reads the provider's bytes, the console gets them and the request as sent", async () => {
  const sse = anthropicStream("Votre colis part aujourd’hui ✓ 😀");
  const { provider, console, fetch } = await world(() => ({ type: SSE, body: sse, chunk: 13 }));
  const read = await withConversation({ id: "c-1", customer: "u-9", labels: { queue: "web" } }, async () => {
    const res = await ask(fetch, provider.url);
    assert.equal(res.headers.get("content-type"), SSE);
    assert.equal(res.status, 200);
    assert.equal(res.url, `${provider.url}/v1/messages`);
    return Buffer.from(await res.arrayBuffer());
  });
  assert.equal(read.toString("utf8"), sse);
  assert.ok(await flush(5));
  const [posted] = console.exchanges();
  assert.equal(posted.headers.authorization, "Bearer tok");
  assert.match(posted.headers["idempotency-key"], /^[0-9a-f]{32}$/);
  const body = posted.json;
  assert.equal(body.stream, sse);
  assert.equal(Buffer.from(body.request, "utf8").compare(provider.received[0].body), 0);
  assert.deepEqual([body.format, body.conversation, body.customer, body.labels], ["anthropic.messages", "c-1", "u-9", { queue: "web" }]);
  assert.ok(body.latency_ms >= 0 && !body.cancelled && !("response" in body));
  assert.deepEqual(
    { ...counters(), live_sent: 0 },
    { captured: 1, sent: 1, retried: 0, spooled: 0, dropped: 0, rejected: 0, uncaptured: 0, cancelled: 0, skipped: 0, live_sent: 0, live_dropped: 0 },
  );
});

test("a JSON answer keeps its bytes (pretty-printed, gzip'd on the wire: what the caller read)", async () => {
  const json = anthropicMessage("Bien reçu.");
  const { provider, console, fetch } = await world(() => ({ body: json, gzip: true }));
  const parsed = await withConversation({ id: "c-2", customer: "u-9" }, async () =>
    (await ask(fetch, provider.url, '{"model":"m","messages":[]}')).json(),
  );
  assert.equal(parsed.content[0].text, "Bien reçu.");
  assert.ok(await flush(5));
  assert.equal(console.exchanges()[0].json.response, json);
  assert.equal(console.exchanges()[0].json.request, '{"model":"m","messages":[]}');
});

test("the first bytes reach the caller while the provider still holds the rest", async () => {
  let open;
  const gate = new Promise((resolve) => {
    open = resolve;
  });
  const sse = anthropicStream("Un instant.");
  const { provider, console, fetch } = await world(() => ({ type: SSE, body: sse, chunk: 40, gate }));
  await withConversation({ id: "c-3", customer: "u-9" }, async () => {
    const reader = (await ask(fetch, provider.url)).body.getReader();
    const first = await reader.read(); // would hang if anything waited for the whole body
    assert.equal(Buffer.from(first.value).toString(), sse.slice(0, 40));
    open();
    while (!(await reader.read()).done);
  });
  assert.ok(await flush(5));
  assert.equal(console.exchanges()[0].json.stream, sse);
});

test("a stream the caller stops is posted as far as it arrived, cancelled", async () => {
  const never = new Promise(() => {});
  const sse = anthropicStream("Une longue réponse.");
  const { provider, console, fetch } = await world(() => ({ type: SSE, body: sse, chunk: 50, gate: never }));
  await withConversation({ id: "c-4", customer: "u-9" }, async () => {
    const reader = (await ask(fetch, provider.url)).body.getReader();
    await reader.read();
    await reader.cancel("the customer pressed stop");
  });
  assert.ok(await flush(5));
  const body = console.exchanges()[0].json;
  assert.equal(body.stream, sse.slice(0, 50));
  assert.equal(body.cancelled, true);
  assert.equal(counters().cancelled, 1);
});

test("calls outside a conversation, other endpoints and provider errors pass untouched", async () => {
  const { provider, console, fetch } = await world((req) =>
    req.url.endsWith("/messages") ? { body: anthropicMessage("hi") } : { status: 429, body: '{"error":"slow down"}' },
  );
  const outside = await ask(fetch, provider.url, '{"model":"m"}');
  assert.equal((await outside.json()).content[0].text, "hi");
  await withConversation({ id: "c-5", customer: "u-9" }, async () => {
    const counted = await fetch(`${provider.url}/v1/messages/count_tokens`, { method: "POST", body: "{}" });
    assert.equal(counted.status, 429);
    const limited = await fetch(`${provider.url}/v1/responses`, { method: "POST", body: "{}" });
    assert.equal(limited.status, 429);
    assert.equal(await limited.text(), '{"error":"slow down"}');
  });
  assert.ok(await flush(5));
  assert.equal(console.exchanges().length, 0);
  const c = counters();
  assert.deepEqual([c.uncaptured, c.skipped, c.captured], [1, 1, 0]);
});

test("the provider's own failure reaches the caller unchanged; ours never does", async () => {
  const { console, fetch } = await world(() => ({ body: "{}" }));
  await withConversation({ id: "c-6", customer: "u-9" }, async () => {
    await assert.rejects(ask(fetch, "http://127.0.0.1:1"), (error) => error instanceof TypeError && error.message === "fetch failed");
    const aborted = new AbortController();
    aborted.abort(new Error("gave up"));
    await assert.rejects(fetch("http://127.0.0.1:1/v1/messages", { method: "POST", body: "{}", signal: aborted.signal }), /gave up/);
  });
  // A fetch that is not a function of ours: a Request object with its body.
  const provider = await fakeProvider(() => ({ body: anthropicMessage("ok") }));
  cleanup.push(provider.close);
  await withConversation({ id: "c-6", customer: "u-9" }, async () => {
    const res = await fetch(new Request(`${provider.url}/v1/messages`, { method: "POST", body: '{"model":"r"}' }));
    assert.equal((await res.json()).content[0].text, "ok");
  });
  assert.ok(await flush(5));
  assert.equal(console.exchanges()[0].json.request, '{"model":"r"}');
});

test("each concurrent conversation gets its own exchanges", async () => {
  const { provider, console, fetch } = await world((req, body) => ({
    type: SSE,
    body: anthropicStream(`answer to ${JSON.parse(body).model}`),
    chunk: 7,
    delayMs: 1,
  }));
  await Promise.all(
    ["a", "b", "c", "d"].map((name) =>
      withConversation({ id: `conv-${name}`, customer: `cus-${name}` }, async () => {
        const res = await ask(fetch, provider.url, JSON.stringify({ model: name, stream: true }));
        await res.text();
      }),
    ),
  );
  assert.ok(await flush(5));
  const posted = console.exchanges().map((e) => e.json);
  assert.equal(posted.length, 4);
  for (const body of posted) {
    const name = body.conversation.slice(5);
    assert.equal(body.customer, `cus-${name}`);
    assert.equal(body.stream, anthropicStream(`answer to ${name}`));
  }
});

test("withConversation refuses what the console would refuse, where it is written", () => {
  assert.throws(() => withConversation({ id: "", customer: "u" }, () => 0), RangeError);
  assert.throws(() => withConversation({ id: "x".repeat(201), customer: "u" }, () => 0), RangeError);
  assert.equal(withConversation({ id: "😀".repeat(200), customer: "u" }, () => 7), 7);
  assert.throws(() => withConversation({ id: "c", customer: 9 }, () => 0), TypeError);
  assert.throws(() => withConversation({ id: "c", customer: "u", labels: { queue: "" } }, () => 0), RangeError);
  assert.throws(() => withConversation({ id: "c", customer: "u", labels: { note: "x".repeat(4090) } }, () => 0), RangeError);
  assert.throws(() => withConversation({ id: "c", customer: "u", labels: [] }, () => 0), TypeError);
  assert.throws(() => withConversation({ id: "c", customer: "u", capture: "sse" }, () => 0), RangeError);
});
