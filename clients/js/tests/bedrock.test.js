// @ai-sdk/amazon-bedrock through consoleFetch against a fake Bedrock serving a recorded
// ConverseStream (the AI SDK's own fixture, framed as AWS eventstream frames): the posted exchange
// is bedrock.converse, its stream the provider's bytes exactly (stream_base64), its endpoint the
// call's path with the model id percent-encoded, its request the bytes the SDK sent.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";

import { createAmazonBedrock } from "@ai-sdk/amazon-bedrock";
import { streamText } from "ai";

import { consoleFetch, flush, shutdown, withConversation } from "../src/index.js";
import { fakeConsole, fakeProvider } from "./fakes.js";

globalThis.AI_SDK_LOG_WARNINGS = false;
const quiet = { error() {}, warn() {}, info() {}, debug() {} };
const FIXTURE = new URL("../../../tests/fixtures/bedrock/vercel-ai__amazon-bedrock-reasoning.chunks.txt", import.meta.url);
const MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";

const CRC = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (b) => {
  let c = 0xffffffff;
  for (const x of b) c = CRC[(c ^ x) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
function header(name, value) {
  const n = Buffer.from(name);
  const v = Buffer.from(value);
  const len = Buffer.alloc(2);
  len.writeUInt16BE(v.length);
  return Buffer.concat([Buffer.from([n.length]), n, Buffer.from([7]), len, v]);
}
/** One eventstream frame, as Bedrock writes it. */
function frame(type, payload) {
  const headers = Buffer.concat([
    header(":event-type", type),
    header(":content-type", "application/json"),
    header(":message-type", "event"),
  ]);
  const body = Buffer.from(JSON.stringify(payload));
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(12 + headers.length + body.length + 4, 0);
  prelude.writeUInt32BE(headers.length, 4);
  prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
  const message = Buffer.concat([prelude, headers, body]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(message));
  return Buffer.concat([message, crc]);
}

let provider;
let console;
let fetch;
let served;

before(async () => {
  const lines = readFileSync(FIXTURE, "utf8").split("\n").filter((l) => l.trim());
  served = Buffer.concat(
    lines.map((l) => {
      const [[type, payload]] = Object.entries(JSON.parse(l));
      return frame(type, payload);
    }),
  );
  provider = await fakeProvider(() => ({ type: "application/vnd.amazon.eventstream", body: served, chunk: 41 }));
  console = await fakeConsole();
  fetch = consoleFetch({ url: console.url, token: "t", spoolDir: mkdtempSync(path.join(tmpdir(), "ccjs-")), logger: quiet });
});

after(async () => {
  await shutdown(1);
  await provider.close();
  await console.close();
});

test("@ai-sdk/amazon-bedrock: a ConverseStream is posted as stream_base64 with its endpoint", async () => {
  const bedrock = createAmazonBedrock({
    region: "us-east-1",
    baseURL: provider.url,
    accessKeyId: "AKIAFAKE",
    secretAccessKey: "fake",
    fetch,
  });
  const text = await withConversation({ id: "ai-bedrock", customer: "u-1" }, async () => {
    const result = streamText({ model: bedrock(MODEL), prompt: "ai-bedrock: how many r?" });
    return await result.text;
  });
  assert.match(text, /strawberry/);
  assert.ok(await flush(5));
  const posted = console.exchanges().filter((e) => e.json.conversation === "ai-bedrock");
  assert.equal(posted.length, 1);
  const body = posted[0].json;
  assert.equal(body.format, "bedrock.converse");
  assert.equal(body.stream_base64, served.toString("base64"));
  assert.equal(body.stream, undefined);
  assert.equal(body.endpoint, `/model/${encodeURIComponent(MODEL)}/converse-stream`);
  assert.ok(body.endpoint.includes("%3A"));
  assert.equal(Buffer.compare(Buffer.from(body.request, "utf8"), provider.received[0].body), 0);
});
