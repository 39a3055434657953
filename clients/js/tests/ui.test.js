// The AI SDK UI message stream, captured where the route returns it (toUIMessageStreamResponse):
// an `ai-sdk.ui` exchange whose request is the browser's body as sent and whose stream is what
// the browser received.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";

import { createAnthropic } from "@ai-sdk/anthropic";
import { convertToModelMessages, streamText } from "ai";

import { consoleFor, counters, flush, shutdown, withConversation } from "../src/index.js";
import { SSE, fakeConsole, fakeProvider, recorded } from "./fakes.js";

globalThis.AI_SDK_LOG_WARNINGS = false;
const quiet = { error() {}, warn() {}, info() {}, debug() {} };
const CHAT = new URL("../../../tests/fixtures/ai_sdk/chat-request.json", import.meta.url);
let provider;
let console;
let target;

before(async () => {
  const sse = await recorded("vercel-ai__anthropic-clear-thinking.1.chunks.txt");
  provider = await fakeProvider(() => ({ type: SSE, body: sse, chunk: 61 }));
  console = await fakeConsole();
  target = consoleFor({ url: console.url, token: "t", spoolDir: mkdtempSync(path.join(tmpdir(), "ccjs-")), logger: quiet, live: true });
});

after(async () => {
  await shutdown(1);
  await provider.close();
  await console.close();
});

// A Next.js route handler as docs/client.md shows it.
async function POST(req, capture) {
  const anthropic = createAnthropic({ baseURL: `${provider.url}/v1`, apiKey: "k", fetch: target.fetch() });
  const request = await req.text(); // the bytes as the browser sent them; parse a copy
  const { id, messages } = JSON.parse(request);
  return withConversation({ id, customer: "u-ui", capture }, async () => {
    const result = streamText({ model: anthropic("claude-fake"), messages: await convertToModelMessages(messages) });
    return target.captureUIMessageStream(request, result.toUIMessageStreamResponse({ originalMessages: messages }));
  });
}

test("the UI stream is the record: request as sent, stream as the browser read it", async () => {
  const body = readFileSync(CHAT);
  const res = await POST(new Request("http://localhost/api/chat", { method: "POST", body }), "ui");
  assert.equal(res.headers.get("content-type"), "text/event-stream");
  const read = await res.text();
  assert.match(read, /"type":"finish"/);
  assert.ok(await flush(5));
  const posted = console.exchanges().map((e) => e.json);
  assert.equal(posted.length, 1); // the provider call inside passed untouched
  assert.equal(posted[0].format, "ai-sdk.ui");
  assert.equal(posted[0].request, body.toString("utf8"));
  assert.equal(posted[0].stream, read);
  assert.equal(posted[0].conversation, JSON.parse(body).id);
  assert.equal(counters().uncaptured, 0);
});

test("outside a UI conversation the response passes untouched, and says why", async () => {
  const before = console.exchanges().length;
  const body = readFileSync(CHAT, "utf8").replace(/"id": "[^"]+"/, '"id": "chat-provider-level"');
  const res = await POST(new Request("http://localhost/api/chat", { method: "POST", body }), "provider");
  await res.text();
  assert.ok(await flush(5));
  const posted = console.exchanges().slice(before).map((e) => e.json);
  assert.deepEqual(posted.map((p) => p.format), ["anthropic.messages"]); // the provider call only
  assert.equal(counters().skipped, 1);
});
