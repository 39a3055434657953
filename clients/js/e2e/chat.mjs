// A chat frontend's loop, run in Node as the browser runs it: the AI SDK's chat (the
// `AbstractChat` that `useChat` wraps, with a plain ChatState in place of React's) posting to the
// route handler of docs/client.md (chat-route.mjs, written beside this file's run folder by
// tests/client/test_branches_loops.py), called in process. Each step is what a person does in the
// chat window: send a message, regenerate the last answer, edit a message they sent (the chat
// then sends the history up to the edited message). Prints {"messages": [...], "sent": [the
// request bodies, as posted], "flushed": bool}.
//   node chat.mjs PROVIDER_URL MODEL CONSOLE_URL TOKEN CONVERSATION CUSTOMER SPOOL_DIR < steps.json
// steps: [{"send": "text"} | {"regenerate": true} | {"edit": index, "text": "text"}]; step i asks
// the provider for model `${MODEL}-${i}`, so each answer can be told apart.
import { createAnthropic } from "@ai-sdk/anthropic";
import { AbstractChat, DefaultChatTransport } from "ai";
import { consoleFetch, flush } from "@support-console/client";

const [providerUrl, model, consoleUrl, token, conversation, customer, spoolDir] =
  process.argv.slice(2);
const { chatRoute } = await import(`${process.env.ROUTE_DIR}/chat-route.mjs`);
globalThis.AI_SDK_LOG_WARNINGS = false;
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const steps = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const fetch = consoleFetch({ url: consoleUrl, token, spoolDir });
const anthropic = createAnthropic({ baseURL: `${providerUrl}/v1`, apiKey: "sk-fake", fetch });

// The state a framework keeps (React's useState in @ai-sdk/react): here, plain fields.
class NodeChatState {
  constructor() {
    this.status = "ready";
    this.error = undefined;
    this.messages = [];
  }
  pushMessage = (message) => {
    this.messages = this.messages.concat(message);
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index, message) => {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)];
  };
  snapshot = (thing) => structuredClone(thing);
}

class NodeChat extends AbstractChat {
  constructor(init) {
    super({ ...init, state: new NodeChatState() });
  }
}

let step = 0;
const sent = []; // each request body the chat posted, as it posted it
const transport = new DefaultChatTransport({
  api: "http://localhost/api/chat",
  // The route handler, in process: what the browser's fetch reaches on the server.
  fetch: async (url, init) => {
    const POST = chatRoute({
      model: anthropic(`${model}-${step}`),
      customerOf: async () => customer,
      labels: { queue: "web" },
    });
    sent.push(init.body);
    return POST(new Request(url, init));
  },
});
const chat = new NodeChat({ id: conversation, transport });
for (step = 0; step < steps.length; step++) {
  const action = steps[step];
  if (action.send !== undefined) {
    await chat.sendMessage({ text: action.send });
  } else if (action.regenerate) {
    await chat.regenerate();
  } else if (action.edit !== undefined) {
    const edited = chat.messages[action.edit];
    await chat.sendMessage({ text: action.text, messageId: edited.id });
  }
  if (chat.error) throw chat.error;
}
const flushed = await flush(30);
console.log(JSON.stringify({ messages: chat.messages, sent, flushed }));
