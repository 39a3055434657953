// Compiled by tests/types.test.js (tsc --noEmit, strict): the package's types as a backend uses
// them, against the real SDKs' types. A type error here fails the test.
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { streamText } from "ai";
import {
  type Counters,
  type History,
  ConsoleError,
  captureUIMessageStream,
  consoleFetch,
  consoleFor,
  counters,
  flush,
  history,
  shutdown,
  withConversation,
} from "@support-console/client";

const fetch = consoleFetch({ url: "http://127.0.0.1:8000", token: "t", live: true });
const anthropic = createAnthropic({ fetch });
const openai = createOpenAI({ fetch });
const client = new Anthropic({ apiKey: "k", fetch });
const gpt = new OpenAI({ apiKey: "k", fetch });

export async function route(request: string): Promise<Response> {
  const answer: string = await withConversation(
    { id: "c-1", customer: "u-9", labels: { queue: "billing" } },
    async () => {
      const result = streamText({ model: anthropic("claude-sonnet-4-5"), prompt: "Hi" });
      await client.messages.create({ model: "m", max_tokens: 8, messages: [] });
      await gpt.responses.create({ model: "m", input: "Hi" });
      streamText({ model: openai("gpt-5"), prompt: "Hi" });
      return await result.text;
    },
  );
  const ui = consoleFor({ url: "http://127.0.0.1:8000", token: "t" });
  return withConversation({ id: "c-2", customer: "u-9", capture: "ui" }, () => {
    const result = streamText({ model: anthropic("m"), prompt: answer });
    const res: Response = ui.captureUIMessageStream(request, result.toUIMessageStreamResponse());
    return captureUIMessageStream(request, res);
  });
}

export async function after(): Promise<number> {
  const replay: History = await history("c-1");
  const first: Uint8Array | undefined = replay.rawMessages[0];
  const counts: Counters = counters();
  const done: boolean = (await flush(5)) && (await shutdown());
  try {
    await history("nope", { url: "http://x", token: "t", forContinuation: true });
  } catch (error) {
    if (error instanceof ConsoleError) return error.status;
  }
  return replay.messages.length + counts.live_sent + Number(done) + (first?.length ?? 0);
}

// What the types refuse (each line must be an error, or tsc fails on the directive).
// @ts-expect-error: the conversation id is a string
withConversation({ id: 1, customer: "u" }, () => 0);
// @ts-expect-error: capture is "provider" or "ui"
withConversation({ id: "c", customer: "u", capture: "sse" }, () => 0);
// @ts-expect-error: a token is required
consoleFetch({ url: "http://x" });
