import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { Capture, formatFor, utf8 } from "../src/capture.js";

test("the capture table: creating POSTs by path suffix, nothing else", () => {
  assert.equal(formatFor("POST", "/v1/messages"), "anthropic.messages");
  assert.equal(formatFor("post", "/proxy/anthropic/v1/messages/"), "anthropic.messages");
  assert.equal(formatFor("POST", "/v1/responses"), "openai.responses");
  assert.equal(formatFor("POST", "/openai/deployments/x/chat/completions"), "openai.chat");
  assert.equal(formatFor("POST", "/v1/messages/count_tokens"), null);
  assert.equal(formatFor("POST", "/v1/messages/batches"), null);
  assert.equal(formatFor("GET", "/v1/responses"), null);
  assert.equal(formatFor("POST", "/v1/embeddings"), null);
  const table = JSON.parse(readFileSync(new URL("../src/capture-table.json", import.meta.url)));
  // Gemini names its method after a colon; a gateway's prefix in front changes nothing.
  assert.equal(formatFor("POST", "/v1beta/models/gemini-3-pro-preview:streamGenerateContent"), "google.generate_content");
  assert.equal(formatFor("POST", "/gw/v1/projects/p/locations/l/publishers/google/models/g:generateContent"), "google.generate_content");
  assert.equal(formatFor("POST", "/v1beta/models/gemini-3-pro-preview:countTokens"), null);
  assert.ok(table.endpoint.includes("google.generate_content"));
  // Every path of the generated table (one row per capture path of every format) is read back
  // as its format, behind any prefix.
  assert.ok(table.paths.length >= 3);
  for (const { suffix, format } of table.paths) {
    assert.equal(formatFor("POST", `/gateway${suffix}`), format, suffix);
  }
});

test("a stream cut inside a character keeps the characters before it, a whole one is refused", () => {
  const text = Buffer.from("data: é✓😀", "utf8");
  assert.equal(utf8(text, false), "data: é✓😀");
  for (let cut = 1; cut < 4; cut++) {
    assert.equal(utf8(text.subarray(0, text.length - cut), true), "data: é✓");
  }
  assert.throws(() => utf8(text.subarray(0, text.length - 1), false), TypeError);
  assert.throws(() => utf8(Buffer.from([0x64, 0xff, 0x64]), true), TypeError);
  // A byte order mark is kept: it is part of the bytes.
  assert.equal(utf8(Buffer.from("\ufeff{}", "utf8"), false), "\ufeff{}");
});

test("the exchange body: request and response as they were, ids and labels beside", () => {
  const conversation = { id: "c-1", customer: "u-9", labels: { queue: "billing" } };
  const capture = new Capture({
    format: "anthropic.messages",
    conversation,
    request: Buffer.from('{"model":"m",  "messages":[]}'),
  });
  capture.arrived(new Response("", { headers: { "content-type": "application/json" } }));
  capture.chunks.push(Buffer.from('{\n  "content": []'), Buffer.from("\n}"));
  capture.ended = true;
  capture.finish();
  const body = JSON.parse(capture.body().toString("utf8"));
  assert.equal(body.request, '{"model":"m",  "messages":[]}');
  assert.equal(body.response, '{\n  "content": []\n}');
  assert.equal(body.format, "anthropic.messages");
  assert.deepEqual([body.conversation, body.customer, body.labels], ["c-1", "u-9", { queue: "billing" }]);
  assert.ok(!("cancelled" in body) && !("live_exchange" in body) && !("stream" in body));
  assert.match(body.started_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal(capture.key.length, 32);
});
