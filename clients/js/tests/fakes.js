// A fake provider and a fake console on loopback (node:http), for the package's own tests.
// The real console is exercised by the repository's pytest suite (tests/client/test_js_client.py).

import http from "node:http";
import { gzipSync } from "node:zlib";

/** A provider answering every POST with `reply(req, body)`: {status, type, body, chunk, gzip,
 * delayMs, gate} (an SSE body is sent in `chunk`-byte pieces; `gate` is a promise that holds the
 * rest after the first piece). Keeps what it received. */
export async function fakeProvider(reply) {
  const received = [];
  const server = http.createServer((req, res) => {
    const parts = [];
    req.on("data", (p) => parts.push(p));
    req.on("end", async () => {
      const body = Buffer.concat(parts);
      received.push({ path: req.url, headers: req.headers, body });
      const r = await reply(req, body);
      let data = Buffer.from(r.body);
      const headers = { "content-type": r.type ?? "application/json" };
      if (r.gzip) {
        data = gzipSync(data);
        headers["content-encoding"] = "gzip";
      }
      res.writeHead(r.status ?? 200, headers);
      res.socket.setNoDelay(true);
      const chunk = r.chunk ?? data.length;
      for (let i = 0; i < data.length; i += chunk) {
        if (i && r.gate) await r.gate;
        if (i && r.delayMs) await new Promise((ok) => setTimeout(ok, r.delayMs));
        if (res.destroyed) return;
        res.write(data.subarray(i, i + chunk));
      }
      res.end();
    });
  });
  return listen(server, { received });
}

/** A console: `answer(req, body)` returns {status, body, headers} (default 201). Keeps every
 * request: {path, headers, body (Buffer), json}. */
export async function fakeConsole(answer = () => ({ status: 201 }), port = 0) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const parts = [];
    req.on("data", (p) => parts.push(p));
    req.on("end", async () => {
      const body = Buffer.concat(parts);
      let json = null;
      try {
        json = JSON.parse(body.toString("utf8"));
      } catch {
        // a GET
      }
      const entry = { method: req.method, path: req.url, headers: req.headers, body, json };
      requests.push(entry);
      const a = (await answer(entry)) ?? { status: 201 };
      res.writeHead(a.status, { "content-type": "application/json", ...(a.headers ?? {}) });
      res.end(a.body ?? JSON.stringify({ status: "ok" }));
    });
  });
  return listen(server, { requests, port });
}

function listen(server, extra) {
  const sockets = new Set();
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  return new Promise((resolve) => {
    server.listen(extra.port ?? 0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({
        ...extra,
        port,
        url: `http://127.0.0.1:${port}`,
        exchanges: () => extra.requests?.filter((r) => r.path === "/api/v1/exchanges") ?? [],
        chunks: () => extra.requests?.filter((r) => r.path === "/api/v1/live/chunks") ?? [],
        close: () =>
          new Promise((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

export const SSE = "text/event-stream; charset=utf-8";

/** An Anthropic Messages stream saying `text`, in the API's named events. */
export function anthropicStream(text, { thinking = "Let me look the order up." } = {}) {
  const events = [
    ["message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-fake", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } } }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking } }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "c2lnbmF0dXJl" } }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["content_block_start", { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }],
    ...[...text.matchAll(/.{1,7}/gsu)].map(([piece]) => ["content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: piece } }]),
    ["content_block_stop", { type: "content_block_stop", index: 1 }],
    ["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 42 } }],
    ["message_stop", { type: "message_stop" }],
  ];
  return events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join("");
}

/** An Anthropic Messages JSON answer saying `text`, pretty-printed (its bytes must survive). */
export function anthropicMessage(text) {
  return JSON.stringify(
    { id: "msg_2", type: "message", role: "assistant", model: "claude-fake", content: [{ type: "text", text }], stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 9, output_tokens: 5 } },
    null,
    2,
  );
}

export const until = async (check, ms = 5000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((ok) => setTimeout(ok, 10));
  }
};

const FIXTURES = new URL("../../../tests/fixtures/providers/", import.meta.url);

/** A recording of the repository's tests/fixtures/providers as the provider's SSE text: named
 * events for Anthropic and the Responses API, `data:` lines and [DONE] for Chat Completions. */
export async function recorded(name) {
  const { readFile } = await import("node:fs/promises");
  const lines = (await readFile(new URL(name, FIXTURES), "utf8")).split("\n").filter((l) => l.trim());
  const chat = lines.some((l) => l.includes('"chat.completion.chunk"'));
  const events = lines.map((line) =>
    chat ? `data: ${line}\n\n` : `event: ${JSON.parse(line).type}\ndata: ${line}\n\n`,
  );
  return events.join("") + (chat ? "data: [DONE]\n\n" : "");
}

/** The first stream of a recording holding several back to back (a Responses tool loop). */
export function firstStream(sse) {
  const end = sse.indexOf("response.completed");
  return end < 0 ? sse : sse.slice(0, sse.indexOf("\n\n", end) + 2);
}
