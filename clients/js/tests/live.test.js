// Live forwarding: a stream's chunks reach POST /api/v1/live/chunks as they arrive, in order,
// every one before the exchange that closes the live stream.

import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, test } from "node:test";

import { consoleFetch, counters, flush, shutdown, withConversation } from "../src/index.js";
import { SSE, anthropicStream, fakeConsole, fakeProvider } from "./fakes.js";

const quiet = { error() {}, warn() {}, info() {}, debug() {} };
const cleanup = [];
afterEach(async () => {
  await shutdown(1);
  for (const close of cleanup.splice(0)) await close();
});

async function world({ live, delayMs = 3, slowConsoleMs = 0 }) {
  const sse = anthropicStream("Je regarde votre commande… c’est parti ✓ 😀 ".repeat(5));
  const provider = await fakeProvider(() => ({ type: SSE, body: sse, chunk: 37, delayMs }));
  const console = await fakeConsole(async (r) => {
    if (r.path.endsWith("/chunks")) {
      if (slowConsoleMs) await new Promise((ok) => setTimeout(ok, slowConsoleMs));
      return { status: 202, body: '{"status":"published"}' };
    }
    return { status: 201 };
  });
  cleanup.push(provider.close, console.close);
  const spoolDir = mkdtempSync(path.join(tmpdir(), "ccjs-"));
  const fetch = consoleFetch({ url: console.url, token: "t", spoolDir, live, logger: quiet });
  await withConversation({ id: "c-live", customer: "u-1" }, async () => {
    const res = await fetch(`${provider.url}/v1/messages`, { method: "POST", body: '{"stream":true}' });
    assert.equal(await res.text(), sse);
  });
  assert.ok(await flush(5));
  return { sse, console };
}

test("chunks go out in order, as text, then the exchange that names them", async () => {
  const { sse, console } = await world({ live: true });
  const chunks = console.chunks().map((r) => r.json);
  assert.ok(chunks.length > 1, `only ${chunks.length} chunk`);
  assert.deepEqual(chunks.map((c) => c.seq), chunks.map((_, i) => i));
  assert.equal(chunks.map((c) => c.chunk).join(""), sse); // characters cut between pieces rejoined
  const [exchange] = console.exchanges();
  assert.equal(console.requests.at(-1), exchange); // after every chunk
  assert.ok(chunks.every((c) => c.exchange === exchange.json.live_exchange));
  assert.equal(exchange.headers["idempotency-key"], exchange.json.live_exchange);
  assert.deepEqual(
    chunks.map((c) => [c.conversation, c.customer, c.format]).at(0),
    ["c-live", "u-1", "anthropic.messages"],
  );
  assert.equal(counters().live_sent, chunks.length);
});

test("a console slower than the stream gets fewer, larger chunks: one post per round trip", async () => {
  const { sse, console } = await world({ live: true, delayMs: 1, slowConsoleMs: 40 });
  const chunks = console.chunks().map((r) => r.json);
  const pieces = Math.ceil(Buffer.byteLength(sse) / 37);
  assert.ok(chunks.length < pieces / 2, `${chunks.length} posts for ${pieces} pieces`);
  assert.equal(chunks.map((c) => c.chunk).join(""), sse);
  assert.deepEqual(chunks.map((c) => c.seq), chunks.map((_, i) => i));
});

test("off by default", async () => {
  const { console } = await world({ live: false });
  assert.equal(console.chunks().length, 0);
  assert.ok(!("live_exchange" in console.exchanges()[0].json));
});
