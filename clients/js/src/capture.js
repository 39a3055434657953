// One provider call as captured: the request body as sent, the response bytes as received.
//
// The tee (tee.js) fills a Capture on the chat path, doing no more than appending each chunk to
// a list; everything else (decoding, the console's JSON body) is done later by the delivery
// loop, through Capture.body().
//
// Which calls are exchanges, in which format, and how each is sent is capture-table.json:
// generated from the console's format registry (`manage.py write_format_tables`), so a provider
// format added to the console needs no edit here.

import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";

// createRequire, not a JSON import: JSON modules print an ExperimentalWarning on Node 20.
const TABLE = createRequire(import.meta.url)("./capture-table.json");
const PATHS = TABLE.paths.map(({ suffix, format }) => [suffix, format]);
const ENDPOINT = new Set(TABLE.endpoint); // the body carries the call's path (model in the URL)
const BINARY = new Set(TABLE.binary); // a stream of these is binary: posted as stream_base64
/** The format of the AI SDK UI message stream (captureUIMessageStream). */
export const UI_FORMAT = TABLE.ui;

/** The console format of a provider call, or null for a call that is no exchange. */
export function formatFor(method, pathname) {
  if (String(method).toUpperCase() !== "POST") return null;
  const path = pathname.replace(/\/+$/, "");
  for (const [suffix, format] of PATHS) {
    if (path.endsWith(suffix)) return format;
  }
  return null;
}

/** A capture that cannot become an exchange body (not UTF-8, a body cut off). */
export class Unsendable extends Error {}

// fatal: a body that is not UTF-8 is refused, never "repaired"; ignoreBOM: a byte order mark
// stays in the text (the default would silently drop it, and with it byte-exactness).
const strict = () => new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export class Capture {
  /**
   * @param {object} init
   * @param {string} init.format the console format
   * @param {{id: string, customer: string, labels: object}} init.conversation
   * @param {string|Uint8Array} init.request the request body as sent
   * @param {string} [init.endpoint] the path and query the call was sent to (no host)
   */
  constructor({ format, conversation, request, endpoint = "" }) {
    this.format = format;
    this.conversation = conversation;
    this.request = request;
    this.endpoint = endpoint;
    // The exchange's identity: the Idempotency-Key of every attempt to post it, the `exchange`
    // of its live chunks and the body's `live_exchange`.
    this.key = randomUUID().replaceAll("-", "");
    this.startedAt = new Date();
    this.started = performance.now();
    this.status = 0;
    this.streamed = false;
    this.binary = false; // a binary stream (BINARY formats): posted as stream_base64
    this.chunks = [];
    this.ended = false; // read to its end
    this.finished = false; // closed: nothing more will arrive
    this.live = false; // its chunks are forwarded as they arrive (forward.js)
    this.liveSeq = 0; // live chunks posted (or being posted) so far
    this.latencyMs = 0;
  }

  /** What a worker thread gets: the fields, the chunks joined into one (see console.js). */
  message() {
    const { format, conversation, request, endpoint, key, startedAt, started, status } = this;
    const { streamed, binary, ended, finished, live, latencyMs } = this;
    return {
      fields: {
        format, conversation, request, endpoint, key, startedAt, started, status, streamed, binary,
      },
      state: { ended, finished, live, latencyMs },
      received: join(this.chunks),
    };
  }

  /** The capture back from message() (a structured clone of it). */
  static revive({ fields, state, received }) {
    const capture = Object.assign(Object.create(Capture.prototype), fields, state);
    capture.chunks = [received];
    capture.liveSeq = 0;
    return capture;
  }

  arrived(response) {
    this.status = response.status;
    const type = (response.headers.get("content-type") || "").split(";")[0].trim().toLowerCase();
    this.streamed = type === "text/event-stream";
    if (BINARY.has(this.format) && type !== "" && type !== "application/json") {
      this.streamed = this.binary = true;
    }
  }

  /** Closed (or broken) before the response ended: only what arrived is kept. */
  get cancelled() {
    return this.finished && !this.ended;
  }

  /** Once, when the response is closed; false when it was finished already. */
  finish() {
    if (this.finished) return false;
    this.finished = true;
    this.latencyMs = Math.max(0, Math.round(performance.now() - this.started));
    return true;
  }

  /** The response body as the caller read it (fetch has already undone any content coding). */
  received() {
    return this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
  }

  /** The POST /api/v1/exchanges body, UTF-8 JSON. A stream cancelled before its end is sent as
   * far as it arrived, with `cancelled`; a plain response cut off is no message (Unsendable). */
  body() {
    const cancelled = this.cancelled;
    if (cancelled && !this.streamed) {
      throw new Unsendable("the response body was cut off before its end (not a stream)");
    }
    let request;
    let response;
    let output = this.streamed ? "stream" : "response";
    try {
      request = typeof this.request === "string" ? this.request : strict().decode(this.request);
      if (this.binary) {
        output = "stream_base64";
        response = Buffer.from(this.received()).toString("base64");
      } else {
        response = utf8(this.received(), cancelled);
      }
    } catch (error) {
      if (error instanceof TypeError) throw new Unsendable(`not UTF-8: ${error.message}`);
      throw error;
    }
    const body = {
      conversation: this.conversation.id,
      customer: this.conversation.customer,
      format: this.format,
      request,
      [output]: response,
      started_at: this.startedAt.toISOString(),
      latency_ms: this.latencyMs,
    };
    if (ENDPOINT.has(this.format) && this.endpoint) body.endpoint = this.endpoint;
    if (cancelled) body.cancelled = true;
    if (this.liveSeq) body.live_exchange = this.key; // the console closes the live stream
    if (Object.keys(this.conversation.labels).length) body.labels = this.conversation.labels;
    return Buffer.from(JSON.stringify(body), "utf8");
  }
}

/** The chunks in one fresh buffer (not Node's pool: it is transferred to the worker thread). */
export function join(chunks) {
  let size = 0;
  for (const chunk of chunks) size += chunk.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/** `data` as text. A stream cut off (`cut`) may end inside a character: those last bytes never
 * made a character the chat could show, and are left out. */
export function utf8(data, cut) {
  let end = data.length;
  if (cut) {
    // Step back over continuation bytes (at most 3) to the last lead byte: drop it when the
    // character it starts is incomplete.
    let i = end - 1;
    while (i >= 0 && end - i <= 3 && (data[i] & 0xc0) === 0x80) i--;
    if (i >= 0) {
      const lead = data[i];
      const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
      if (end - i < need) end = i;
    }
  }
  return strict().decode(end === data.length ? data : data.subarray(0, end));
}
