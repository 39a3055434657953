// Provider calls through @support-console/client and the real SDKs, driven by the repository's
// tests/client/test_js_client.py against a real console and the fake provider of tests/client.
// Reads a plan as JSON on stdin, prints one JSON line:
//   {"answers": [{answer} or {error}...], "counters": {...}, "flushed": bool, "history": {conversation: base64}}
//
// plan: {provider, console, token, spoolDir, live, flush, calls: [{sdk, conversation, customer, settle,
// model, stream}], history: [conversation...]}; sdk is one of ai-anthropic, ai-openai,
// ai-openai-chat, anthropic, openai-responses, openai-chat.

import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import Anthropic from "@anthropic-ai/sdk";
import { streamText } from "ai";
import OpenAI from "openai";

import { consoleFetch, counters, flush, history, withConversation } from "@support-console/client";

globalThis.AI_SDK_LOG_WARNINGS = false;
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const plan = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const fetch = consoleFetch({
  url: plan.console,
  token: plan.token,
  spoolDir: plan.spoolDir,
  live: Boolean(plan.live),
  backoff: 0.05,
  backoffMax: 0.2,
  timeout: 10,
});
const ai = {
  anthropic: createAnthropic({ baseURL: `${plan.provider}/v1`, apiKey: "sk-fake", fetch }),
  openai: createOpenAI({ baseURL: `${plan.provider}/v1`, apiKey: "sk-fake", fetch }),
};
const anthropic = new Anthropic({ baseURL: plan.provider, apiKey: "sk-fake", fetch, maxRetries: 0 });
const openai = new OpenAI({ baseURL: `${plan.provider}/v1`, apiKey: "sk-fake", fetch, maxRetries: 0 });

async function call({ sdk, model, stream, question }) {
  const messages = [{ role: "user", content: question }];
  switch (sdk) {
    case "ai-anthropic":
      return await streamText({ model: ai.anthropic(model), prompt: question }).text;
    case "ai-openai":
      return await streamText({ model: ai.openai(model), prompt: question }).text;
    case "ai-openai-chat":
      return await streamText({ model: ai.openai.chat(model), prompt: question }).text;
    case "anthropic": {
      if (!stream) {
        const message = await anthropic.messages.create({ model, max_tokens: 1024, messages });
        return message.content.map((b) => b.type).join("|");
      }
      // The raw events (the SDK's MessageStream helper refuses some recordings by design: a
      // second message_start mid-stream), as a backend relaying them would read them.
      let out = "";
      const events = await anthropic.messages.create({ model, max_tokens: 1024, messages, stream: true });
      for await (const event of events) out += event.type === "content_block_delta" ? "." : "";
      return out;
    }
    case "openai-responses": {
      if (!stream) return (await openai.responses.create({ model, input: messages })).output_text;
      let out = "";
      for await (const event of await openai.responses.create({ model, input: messages, stream: true })) {
        if (event.type === "response.output_text.delta") out += event.delta;
      }
      return out;
    }
    case "openai-chat": {
      if (!stream) return (await openai.chat.completions.create({ model, messages })).choices[0].message.content;
      let out = "";
      for await (const chunk of await openai.chat.completions.create({ model, messages, stream: true })) {
        out += chunk.choices[0]?.delta?.content ?? "";
      }
      return out;
    }
    default:
      throw new Error(`unknown sdk ${sdk}`);
  }
}

const answers = [];
for (const c of plan.calls) {
  try {
    // settle: what is queued is delivered first (a conversation the console has stored, as a
    // live view needs: chunks of a conversation it has not stored yet are not kept).
    if (c.settle) await flush(30);
    const answer = await withConversation(
      { id: c.conversation, customer: c.customer, labels: c.labels },
      () => call({ ...c, question: `Where is my parcel? (${c.model})` }),
    );
    answers.push({ answer });
  } catch (error) {
    answers.push({ error: `${c.sdk} ${c.model}: ${error.stack ?? error}` });
  }
}
const flushed = await flush(plan.flush ?? 30);
const replays = {};
for (const conversation of plan.history ?? []) {
  replays[conversation] = Buffer.from((await history(conversation)).raw).toString("base64");
}
console.log(JSON.stringify({ answers, counters: counters(), flushed, history: replays }));
