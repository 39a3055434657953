// The AI SDK's own accumulation of UI message streams, for the differential test
// (tests/conversations/formats/differential/oracles.py runs it).
//
// stdin: {"cases": [{"id", "sse", "message", "cuts"}]}; stdout: {"version", "results": [...]}.
// Each stream is read as the browser reads it: its bytes in chunks cut at `cuts` (so multi-byte
// characters and lines are split across reads), decoded and parsed by `parseJsonEventStream`
// with `uiMessageChunkSchema` (what DefaultChatTransport does), then accumulated by
// `readUIMessageStream`, continuing `message` when it is given.
//
// - A chunk the schema refuses (an unknown type) fails the default transport: the result says
//   where, and a second run feeds the chunks unvalidated (what readUIMessageStream builds from
//   them with a transport that does not validate: the message the console stores).
// - An `error` chunk: useChat's onError throws and it reads no further; so does this harness
//   (the chunk is reported, not fed: it changes nothing in the message).
// - readUIMessageStream yields a snapshot only when a chunk writes (a `start-step` does not). The
//   result is the last snapshot a chunk of the stream wrote, which is also what useChat's
//   messages hold (so a trailing `start-step` is not in it); a probe part written before the
//   stream ends (or errors) gives the state as the stream left it when no chunk wrote at all.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema } from "ai";

const require = createRequire(import.meta.url);
const VERSION = require("ai/package.json").version;
const PROBE = "__differential_probe__";

function byteStream(text, cuts) {
  const bytes = new TextEncoder().encode(text);
  const pieces = [];
  let start = 0;
  for (const cut of [...cuts, bytes.length]) {
    if (cut > start && cut <= bytes.length) {
      pieces.push(bytes.slice(start, cut));
      start = cut;
    }
  }
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces) controller.enqueue(piece);
      controller.close();
    },
  });
}

function probe(n) {
  return { type: "text-start", id: `${PROBE}${n}`, providerMetadata: { [PROBE]: {} } };
}

// The parsed chunks, as the transport hands them on; stops at an error chunk or a refused one.
function chunks(sse, cuts, validate, report) {
  let index = 0;
  let probes = 0;
  let stopped = false;
  return parseJsonEventStream({ stream: byteStream(sse, cuts), schema: uiMessageChunkSchema })
    .pipeThrough(
      new TransformStream({
        transform(result, controller) {
          if (stopped) return;
          const at = index++;
          if (!result.success && (validate || result.rawValue === undefined)) {
            const message = String(result.error?.message ?? result.error).split("\n")[0];
            report.transportError = { at, message };
            controller.enqueue(probe(probes++));
            stopped = true;
            controller.terminate();
            return;
          }
          const chunk = validate ? result.value : result.rawValue;
          if (chunk && chunk.type === "error") {
            // useChat's onError throws here: nothing of the message changes, nothing more is read.
            report.errorChunk = { at, errorText: chunk.errorText };
            controller.enqueue(probe(probes++));
            stopped = true;
            controller.terminate();
            return;
          }
          controller.enqueue(chunk);
        },
        flush(controller) {
          if (!stopped) controller.enqueue(probe(probes++));
        },
      }),
    );
}

async function accumulate(testCase, validate) {
  const report = { transportError: null, errorChunk: null, errors: [] };
  const message = testCase.message == null ? undefined : structuredClone(testCase.message);
  let last = null;
  const stream = readUIMessageStream({
    message,
    stream: chunks(testCase.sse, testCase.cuts ?? [], validate, report),
    onError: (error) => report.errors.push(String(error?.message ?? error)),
  });
  let probed = null;
  for await (const snapshot of stream) {
    const parts = snapshot.parts;
    if (parts.length && parts[parts.length - 1].providerMetadata?.[PROBE] !== undefined) {
      probed = snapshot;
    } else {
      last = snapshot;
    }
  }
  if (last == null && probed != null) {
    // Nothing wrote the message out: the state as the stream left it.
    last = probed;
    const parts = last.parts;
    while (parts.length && parts[parts.length - 1].providerMetadata?.[PROBE] !== undefined) {
      parts.pop();
    }
  }
  return { message: last, ...report };
}

async function run(testCase) {
  const out = { id: testCase.id };
  try {
    out.browser = await accumulate(testCase, true);
    if (out.browser.transportError) out.unvalidated = await accumulate(testCase, false);
  } catch (error) {
    out.crash = String(error?.stack ?? error);
  }
  return out;
}

const input = JSON.parse(readFileSync(0, "utf8"));
const results = [];
for (const testCase of input.cases) results.push(await run(testCase));
process.stdout.write(JSON.stringify({ version: VERSION, results }));
