// What @support-console/client (clients/js) adds to a streamed provider call in Node: time to
// first token and total time, with and without consoleFetch, in the same run.
//
// What it measures: the AI SDK's streamText with @ai-sdk/anthropic (clients/js's dev
// dependencies: `cd clients/js && npm ci` first) reading a recorded Anthropic stream with
// thinking and text (tests/fixtures/providers), from a fake provider in a process of its own
// (20 ms to the first byte, 1 ms between chunks, like a real provider's pace). Three providers
// of the same model take turns call by call: plain (the global fetch), captured (consoleFetch)
// and live (consoleFetch with live: true, each chunk also forwarded). Every captured exchange is
// posted to a console: by default a fake one in a process of its own that reads and parses each
// body and answers 201 or 202 (the console is another machine's work in production), or a real
// one (--console URL --token T --live-token T2: the live arm is a console of its own). Time to first token: from streamText() to the first
// text-delta of its fullStream; total: to the end of the stream.
//
// Then the same rotation with the provider in process (a fetch answering from memory, chunk by
// chunk, no network, no pause): what is left is the SDK's and the client's own work, so the
// difference is the client's cost on the chat path without the network's noise (the posts to
// the console still run, on the same event loop).
//
// --no-worker runs both consoles' delivery on the chat's own event loop (the client's fallback
// where no worker thread can be started), to compare.
//
// How to read the output: p50 and p99 of each, in ms, the ratio to plain, and the p99 time to
// first token added (arm p99 minus plain p99; target: under 1 ms), with the median of each
// round's difference (the arms' calls of one round run back to back, so it is the figure least
// moved by other work on the machine; the p99s are not: with the load average above the core
// count they swing by tens of milliseconds between runs, plain included). At the end every exchange must
// have reached the console (else exit 1).
//
//   node bench/client_js.mjs [--calls 400] [--mock-calls 2000] [--first-byte-ms 20]
//       [--chunk-ms 1] [--chunk 200] [--quick] [--no-worker] [--console URL --token T --live-token T2]

import { fork } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const FIXTURE = path.join(ROOT, "tests/fixtures/providers/vercel-ai__anthropic-clear-thinking.1.chunks.txt");
const TARGET_ADDED_P99_MS = 1;

const { values: args } = parseArgs({
  options: {
    calls: { type: "string", default: "400" },
    "mock-calls": { type: "string", default: "2000" },
    warmup: { type: "string", default: "20" },
    "first-byte-ms": { type: "string", default: "20" },
    "chunk-ms": { type: "string", default: "1" },
    chunk: { type: "string", default: "200" },
    quick: { type: "boolean", default: false },
    "no-worker": { type: "boolean", default: false },
    console: { type: "string" },
    token: { type: "string" },
    "live-token": { type: "string" },
    "serve-provider": { type: "boolean", default: false },
    "serve-console": { type: "boolean", default: false },
  },
});
const num = (name) => Number(args[name]);

/** The recording with the `event:` lines Anthropic sends. */
function anthropicSse() {
  return readFileSync(FIXTURE, "utf8")
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => `event: ${JSON.parse(line).type}\ndata: ${line}\n\n`)
    .join("");
}

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

// --- The child processes ----------------------------------------------------------------------

async function serveProvider() {
  const body = Buffer.from(anthropicSse());
  const chunk = num("chunk");
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", async () => {
      await sleep(num("first-byte-ms"));
      res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
      res.socket.setNoDelay(true);
      for (let i = 0; i < body.length; i += chunk) {
        if (i && num("chunk-ms")) await sleep(num("chunk-ms"));
        res.write(body.subarray(i, i + chunk));
      }
      res.end();
    });
  });
  server.listen(0, "127.0.0.1", () => process.send(`http://127.0.0.1:${server.address().port}`));
}

async function serveConsole() {
  const server = http.createServer((req, res) => {
    const parts = [];
    req.on("data", (p) => parts.push(p));
    req.on("end", () => {
      JSON.parse(Buffer.concat(parts).toString("utf8")); // read it, as a console would
      const live = req.url.endsWith("/live/chunks");
      res.writeHead(live ? 202 : 201, { "content-type": "application/json" });
      res.end(live ? '{"status":"published","next_seq":1}' : '{"exchange":1}');
    });
  });
  server.listen(0, "127.0.0.1", () => process.send(`http://127.0.0.1:${server.address().port}`));
}

function child(flag) {
  const proc = fork(fileURLToPath(import.meta.url), [flag, ...process.argv.slice(2)], { stdio: "inherit" });
  return new Promise((resolve) => proc.once("message", (url) => resolve({ proc, url })));
}

// --- The bench ----------------------------------------------------------------------------------

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function oneCall(streamText, model, prompt) {
  const began = performance.now();
  let first = null;
  const result = streamText({ model, prompt, maxOutputTokens: 1024 });
  for await (const part of result.fullStream) {
    if (first === null && part.type === "text-delta") first = performance.now();
  }
  const end = performance.now();
  if (first === null) throw new Error("the stream had no text-delta");
  return [first - began, end - began];
}

async function rotate(streamText, withConversation, models, calls, warmup, prefix) {
  const times = Object.fromEntries(Object.keys(models).map((name) => [name, [[], []]]));
  const order = Object.entries(models);
  for (let i = 0; i < warmup + calls; i++) {
    // Rotate who goes first, so load on the machine weighs on every arm alike.
    const turn = [...order.slice(i % order.length), ...order.slice(0, i % order.length)];
    await withConversation({ id: `${prefix}-${i}`, customer: "bench-customer" }, async () => {
      for (const [name, model] of turn) {
        const [ttft, total] = await oneCall(streamText, model, `${prefix}-${i}`);
        if (i >= warmup) {
          times[name][0].push(ttft);
          times[name][1].push(total);
        }
      }
    });
  }
  return times;
}

function report(title, times) {
  console.log(title);
  console.log(`${"".padEnd(10)} ${"TTFT p50".padStart(10)} ${"TTFT p99".padStart(10)} ${"total p50".padStart(10)} ${"total p99".padStart(10)}  (ms)`);
  const cells = (values) => values.map((v) => v.toFixed(3).padStart(10)).join(" ");
  for (const [name, [ttft, total]] of Object.entries(times)) {
    console.log(`${name.padEnd(10)} ${cells([percentile(ttft, 50), percentile(ttft, 99), percentile(total, 50), percentile(total, 99)])}`);
  }
  const [pt, ptot] = times.plain;
  for (const [name, [ttft, total]] of Object.entries(times)) {
    if (name === "plain") continue;
    const ratios = [[ttft, pt], [total, ptot]].flatMap(([a, b]) => [50, 99].map((p) => percentile(a, p) / percentile(b, p)));
    const added = percentile(ttft, 99) - percentile(pt, 99);
    const added50 = percentile(ttft, 50) - percentile(pt, 50);
    // Each round's calls ran back to back: their difference is free of the machine's drift.
    const paired = percentile(ttft.map((t, i) => t - pt[i]), 50);
    const sign = (v) => `${v >= 0 ? "+" : ""}${v.toFixed(3)}`;
    console.log(`${`÷ plain`.padEnd(10)} ${cells(ratios)}  (${name})`);
    console.log(
      `${name}: TTFT added p50 ${sign(added50)} ms, p99 ${sign(added)} ms ` +
        `(target: p99 < ${TARGET_ADDED_P99_MS} ms): ${added < TARGET_ADDED_P99_MS ? "ok" : "ABOVE TARGET"}; ` +
        `median of the rounds' differences ${sign(paired)} ms`,
    );
  }
  console.log("");
}

/** A fetch answering from memory: the recording in `chunk`-byte pieces, no network, no pause. */
function memoryFetch(sse, chunk) {
  const body = Buffer.from(sse);
  return async (input, init) => {
    if (init?.body) JSON.parse(init.body);
    let at = 0;
    const stream = new ReadableStream({
      pull(controller) {
        if (at >= body.length) controller.close();
        else controller.enqueue(new Uint8Array(body.subarray(at, (at += chunk))));
      },
    });
    return new Response(stream, { status: 200, headers: { "content-type": "text/event-stream" } });
  };
}

async function main() {
  if (args.quick) Object.assign(args, { calls: "100", "mock-calls": "400", warmup: "10" });
  const calls = num("calls");
  const mockCalls = num("mock-calls");
  const warmup = num("warmup");
  const dev = createRequire(path.join(ROOT, "clients/js/package.json"));
  let ai;
  let anthropic;
  try {
    ai = await import(pathToFileURL(dev.resolve("ai")));
    anthropic = await import(pathToFileURL(dev.resolve("@ai-sdk/anthropic")));
  } catch {
    console.error("error: the AI SDK is not installed: cd clients/js && npm ci");
    return 1;
  }
  globalThis.AI_SDK_LOG_WARNINGS = false;
  const client = await import(pathToFileURL(path.join(ROOT, "clients/js/src/index.js")));
  const provider = await child("--serve-provider");
  const fake = args.console ? null : await child("--serve-console");
  const consoleUrl = args.console ?? fake.url;
  // Two consoles (a console's options are fixed by its URL and token): two tokens.
  const token = args.token ?? "bench-token";
  const liveToken = args["live-token"] ?? (args.console ? token : "bench-token-live");
  if (liveToken === token) {
    console.error("error: --live-token: a second service token (the live arm is a console of its own)");
    return 2;
  }
  const spool = mkdtempSync(path.join(os.tmpdir(), "bench-client-js-"));
  const worker = !args["no-worker"];
  const captured = client.consoleFor({ url: consoleUrl, token, spoolDir: path.join(spool, "a"), worker });
  const live = client.consoleFor({ url: consoleUrl, token: liveToken, spoolDir: path.join(spool, "b"), live: true, worker });
  try {
    const make = (fetch) => anthropic.createAnthropic({ baseURL: `${provider.url}/v1`, apiKey: "sk-fake", fetch });
    const network = await rotate(
      ai.streamText,
      client.withConversation,
      {
        plain: make(undefined)("claude-bench"),
        captured: make(captured.fetch())("claude-bench"),
        live: make(live.fetch())("claude-bench"),
      },
      calls,
      warmup,
      "net",
    );
    const sse = anthropicSse();
    const memory = memoryFetch(sse, num("chunk"));
    const inProcess = await rotate(
      ai.streamText,
      client.withConversation,
      {
        plain: make(memory)("claude-bench"),
        captured: make(captured.fetch(memory))("claude-bench"),
        live: make(live.fetch(memory))("claude-bench"),
      },
      mockCalls,
      warmup,
      "mem",
    );
    const delivered = await client.flush(120);
    const counts = client.counters();
    report(
      `${calls} streamed calls per arm, provider: ${args["first-byte-ms"]} ms to the first byte, ` +
        `${args["chunk-ms"]} ms between ${args.chunk}-byte chunks; delivery on ` +
        `${worker ? "a worker thread" : "the chat's thread (--no-worker)"}; ${os.cpus().length} cores, ` +
        `load ${os.loadavg()[0].toFixed(1)}, Node ${process.version}`,
      network,
    );
    if (mockCalls) report(`${mockCalls} streamed calls per arm, provider in process`, inProcess);
    console.log(`delivery: ${JSON.stringify(counts)}`);
    const expected = 2 * (2 * warmup + calls + mockCalls);
    if (!delivered || counts.sent !== expected) {
      console.error(`error: ${counts.sent} of ${expected} exchanges reached the console`);
      return 1;
    }
    return 0;
  } finally {
    await client.shutdown(5);
    provider.proc.kill();
    fake?.proc.kill();
    rmSync(spool, { recursive: true, force: true });
  }
}

if (args["serve-provider"]) await serveProvider();
else if (args["serve-console"]) await serveConsole();
else process.exitCode = await main();
