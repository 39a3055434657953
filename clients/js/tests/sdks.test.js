// The real SDKs through consoleFetch against a fake provider serving recorded streams: the AI SDK
// (streamText with @ai-sdk/anthropic and @ai-sdk/openai), @anthropic-ai/sdk and openai. Each
// posted exchange holds the bytes the SDK sent and the bytes the provider sent back; the SDK's
// own result is what it is without the wrapper. (Against the real console: the repository's
// tests/client/test_js_client.py.)

import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";

import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import Anthropic from "@anthropic-ai/sdk";
import { streamText } from "ai";
import OpenAI from "openai";

import { consoleFetch, counters, flush, shutdown, withConversation } from "../src/index.js";
import { SSE, anthropicMessage, fakeConsole, fakeProvider, firstStream, recorded } from "./fakes.js";

globalThis.AI_SDK_LOG_WARNINGS = false;
const quiet = { error() {}, warn() {}, info() {}, debug() {} };
let provider;
let console;
let fetch;
const served = {};

before(async () => {
  served.messages = await recorded("vercel-ai__anthropic-clear-thinking.1.chunks.txt");
  served.responses = firstStream(await recorded("vercel-ai__openai-web-search-tool.1.chunks.txt"));
  served.chat = await recorded("vercel-ai__deepseek-reasoning.chunks.txt");
  served.json = anthropicMessage("Le colis est parti.");
  provider = await fakeProvider((req, body) => {
    const name = req.url.split("/").at(-1);
    if (name === "messages" && !JSON.parse(body).stream) return { body: served.json };
    const key = name === "completions" ? "chat" : name;
    return { type: SSE, body: served[key], chunk: 53 };
  });
  console = await fakeConsole();
  fetch = consoleFetch({ url: console.url, token: "t", spoolDir: mkdtempSync(path.join(tmpdir(), "ccjs-")), logger: quiet });
});

after(async () => {
  await shutdown(1);
  await provider.close();
  await console.close();
});

async function check(conversation, format, key) {
  assert.ok(await flush(5));
  const posted = console.exchanges().filter((e) => e.json.conversation === conversation);
  assert.equal(posted.length, 1);
  const body = posted[0].json;
  assert.equal(body.format, format);
  const received = provider.received.filter((r) => r.body.includes(Buffer.from(conversation)));
  assert.equal(received.length, 1, `the provider got ${received.length} requests of ${conversation}`);
  assert.equal(Buffer.compare(Buffer.from(body.request, "utf8"), received[0].body), 0);
  assert.equal(key === "json" ? body.response : body.stream, served[key]);
}

const inConversation = (id, fn) => withConversation({ id, customer: "u-1" }, fn);

test("the AI SDK: streamText with @ai-sdk/anthropic", async () => {
  const anthropic = createAnthropic({ baseURL: `${provider.url}/v1`, apiKey: "k", fetch });
  const text = await inConversation("ai-anthropic", async () => {
    const result = streamText({ model: anthropic("claude-fake"), prompt: "ai-anthropic: where is it?" });
    let out = "";
    for await (const piece of result.textStream) out += piece;
    return out;
  });
  assert.ok(text.length > 0);
  await check("ai-anthropic", "anthropic.messages", "messages");
});

test("the AI SDK: streamText with @ai-sdk/openai, Responses and Chat Completions", async () => {
  const openai = createOpenAI({ baseURL: `${provider.url}/v1`, apiKey: "k", fetch });
  await inConversation("ai-openai", async () => {
    const result = streamText({ model: openai("gpt-fake"), prompt: "ai-openai: where is it?" });
    assert.ok((await result.text).length > 0);
  });
  await check("ai-openai", "openai.responses", "responses");
  await inConversation("ai-openai-chat", async () => {
    const result = streamText({ model: openai.chat("gpt-fake"), prompt: "ai-openai-chat: where?" });
    assert.ok((await result.text).length > 0);
  });
  await check("ai-openai-chat", "openai.chat", "chat");
});

test("@anthropic-ai/sdk: a stream and a plain answer", async () => {
  const client = new Anthropic({ baseURL: provider.url, apiKey: "k", fetch, maxRetries: 0 });
  await inConversation("sdk-anthropic", async () => {
    const stream = client.messages.stream({ model: "m", max_tokens: 64, messages: [{ role: "user", content: "sdk-anthropic" }] });
    const message = await stream.finalMessage();
    assert.ok(message.content.some((block) => block.type === "text"));
  });
  await check("sdk-anthropic", "anthropic.messages", "messages");
  await inConversation("sdk-anthropic-json", async () => {
    const message = await client.messages.create({ model: "m", max_tokens: 64, messages: [{ role: "user", content: "sdk-anthropic-json" }] });
    assert.equal(message.content[0].text, "Le colis est parti.");
  });
  await check("sdk-anthropic-json", "anthropic.messages", "json");
});

test("openai: Responses and Chat Completions streams", async () => {
  const client = new OpenAI({ baseURL: `${provider.url}/v1`, apiKey: "k", fetch, maxRetries: 0 });
  await inConversation("sdk-openai", async () => {
    const stream = await client.responses.create({ model: "m", input: "sdk-openai", stream: true });
    let events = 0;
    for await (const _ of stream) events++;
    assert.ok(events > 3);
  });
  await check("sdk-openai", "openai.responses", "responses");
  await inConversation("sdk-openai-chat", async () => {
    const stream = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "sdk-openai-chat" }], stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
    assert.ok(text.length > 0);
  });
  await check("sdk-openai-chat", "openai.chat", "chat");
  const c = counters();
  assert.deepEqual([c.dropped, c.rejected, c.skipped, c.uncaptured], [0, 0, 0, 0]);
});
