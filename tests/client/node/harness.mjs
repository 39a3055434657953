// Runs the route handler of docs/client.md (chat-route.mjs, console-exchange.mjs, written beside
// this file by tests/client/test_ai_sdk.py) as a server would: one POST with the browser's body,
// the UI message stream read to its end. Prints {"status", "stream"} as JSON.
//   node harness.mjs PROVIDER_URL MODEL CONSOLE_URL TOKEN CUSTOMER REQUEST_FILE
import { readFileSync } from "node:fs";
import { createAnthropic } from "@ai-sdk/anthropic";
import { chatRoute } from "./chat-route.mjs";

const [providerUrl, model, consoleUrl, token, customer, requestFile] = process.argv.slice(2);
const anthropic = createAnthropic({ baseURL: `${providerUrl}/v1`, apiKey: "sk-fake" });
const POST = chatRoute({
  model: anthropic(model),
  customerOf: async () => customer,
  console: { url: consoleUrl, token },
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
console.log(JSON.stringify({ status: res.status, stream }));
