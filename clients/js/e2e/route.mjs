// Runs the route handler of docs/client.md (chat-route.mjs, written beside this file's run
// folder by tests/client/test_ai_sdk.py) as a server would: one POST with the browser's body,
// the UI message stream read to its end, then flush(). Prints {"status", "stream", "flushed"}.
//   node route.mjs PROVIDER_URL MODEL CONSOLE_URL TOKEN CUSTOMER REQUEST_FILE SPOOL_DIR
import { readFileSync } from "node:fs";

import { createAnthropic } from "@ai-sdk/anthropic";
import { consoleFetch, flush } from "@support-console/client";

const [providerUrl, model, consoleUrl, token, customer, requestFile, spoolDir] = process.argv.slice(2);
const here = process.env.ROUTE_DIR;
const { chatRoute } = await import(`${here}/chat-route.mjs`);
globalThis.AI_SDK_LOG_WARNINGS = false;
// The console the route captures for (its one console); the provider's calls pass through it
// untouched, since the route keeps the UI stream as the conversation's record.
const fetch = consoleFetch({ url: consoleUrl, token, spoolDir });
const anthropic = createAnthropic({ baseURL: `${providerUrl}/v1`, apiKey: "sk-fake", fetch });
const POST = chatRoute({
  model: anthropic(model),
  customerOf: async () => customer,
  labels: { queue: "web" },
});
const res = await POST(
  new Request("http://localhost/api/chat", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: readFileSync(requestFile),
  }),
);
const stream = await res.text();
const flushed = await flush(30);
console.log(JSON.stringify({ status: res.status, stream, flushed }));
