// A console as the chat's thread sees it: where the tee hands captures and live chunks, and the
// controls (counters, flush, close). The delivery itself (delivery.js) runs on a worker thread
// of its own, started here: the chat's event loop only passes each finished capture (its chunks
// joined, one transfer) and each live chunk (a copy) to it, and reads the counters from shared
// memory. Where no worker can be started (a runtime without worker_threads, a bundle that left
// worker.js out, or `worker: false`), the same Delivery runs on this thread.

import { Worker } from "node:worker_threads";

import { Counts, DEFAULTS, Delivery, SharedCounts } from "./delivery.js";
import { history } from "./history.js";
import { captureFetch, captureUI } from "./tee.js";

const quiet = () => {};
const defaultLogger = {
  error: (...args) => globalThis.console.error(...args),
  warn: (...args) => globalThis.console.warn(...args),
  info: quiet,
  debug: quiet,
};

// Every console of this process: flushed before the process exits, and spilled to the spool if
// it exits anyway.
export const consoles = new Set();

export class Console {
  constructor(url, token, options) {
    this.url = url;
    this.token = token;
    this.options = Object.freeze({ ...DEFAULTS, ...options });
    this.log = this.options.logger ?? defaultLogger;
    this.closed = false;
    this.warnedUncaptured = false;
    this.warnedSkipped = new Set();
    this.replies = new Map(); // id -> resolve, for flush and close answered by the worker
    this.nextId = 0;
    this.worker = null;
    this.delivery = null;
    this.live = []; // live chunks for the worker, sent once per turn of the event loop
    const { logger, ...plain } = this.options;
    if (this.options.worker) {
      try {
        this.counts = new SharedCounts();
        this.worker = new Worker(new URL("./worker.js", import.meta.url), {
          workerData: { url, token, options: plain, buffer: this.counts.buffer },
          name: "console-client",
          // The process's own flags, less those only a main script takes (`node --input-type=module
          // -e ...` would make the worker fail to start).
          execArgv: workerArgv(process.execArgv),
        });
        this.early = []; // captures sent before the worker said it runs: kept to resend if it dies
        this.worker.on("message", (message) => this.#message(message));
        this.worker.on("error", (error) => this.#lost(error));
        this.worker.unref(); // it never keeps the process alive by itself (see flush)
      } catch (error) {
        this.log.warn(`console-client: no worker thread (${error.message}); delivering on this one`);
        this.worker = null;
      }
    }
    if (this.worker === null) {
      this.counts = new Counts();
      this.delivery = new Delivery(url, token, plain, { counts: this.counts, log: this.log });
    }
    consoles.add(this);
  }

  #message(message) {
    if (message.t === "ready") {
      this.early = null;
    } else if (message.t === "log") {
      this.log[message.level]?.(message.message);
    } else if (message.t === "done") {
      this.replies.get(message.id)?.(message.result);
      this.replies.delete(message.id);
    }
  }

  #lost(error) {
    // A worker that died: its queue in memory is gone (its spool stays on disk); the next
    // capture starts over on this thread rather than lose everything after it.
    this.log.error("console-client: the delivery thread failed; delivering on this one", error);
    this.worker = null;
    this.delivery ??= new Delivery(this.url, this.token, { ...this.options, logger: null }, {
      counts: new Counts(),
      log: this.log,
    });
    this.counts = this.delivery.counts;
    for (const resolve of this.replies.values()) resolve(false);
    this.replies.clear();
    // What the worker got before it ever ran (it failed to start) is delivered here instead.
    for (const capture of this.early ?? []) this.delivery.submit(capture);
    this.early = null;
  }

  #ask(t, timeout) {
    return new Promise((resolve) => {
      const id = (this.nextId += 1);
      this.replies.set(id, (result) => {
        if (this.replies.size <= 1) this.worker?.unref();
        resolve(result);
      });
      this.worker.ref(); // the caller waits for the answer: the process stays up for it
      this.worker.postMessage({ t, id, timeout });
    });
  }

  // --- The chat path (the tee) -----------------------------------------------------------

  /** A finished capture (never waits, never throws to the caller). */
  submit(capture) {
    try {
      if (this.delivery !== null) {
        this.delivery.submit(capture);
        return;
      }
      if (this.closed || this.counts.pending >= this.options.queueSize) {
        // The worker's queue is full (or this console closed): dropped here, not sent over.
        if (capture.cancelled) this.counts.add("cancelled");
        this.counts.add("dropped");
        this.log.warn(
          `console-client: dropped an exchange of conversation ${capture.conversation.id}: ` +
            `the queue is ${this.closed ? "closed" : "full"}`,
        );
        return;
      }
      if (this.live.length) this.#sendLive(); // its chunks first
      const message = capture.message();
      if (this.early) {
        // Until the worker runs, a copy is sent and the capture kept (see #lost).
        this.early.push(capture);
        this.worker.postMessage({ t: "exchange", capture: message });
      } else {
        this.worker.postMessage({ t: "exchange", capture: message }, [message.received.buffer]);
      }
    } catch (error) {
      this.log.error("console-client: could not queue an exchange", error);
    }
  }

  /** One chunk of a live stream, as it arrives. To the worker, the chunks that arrive within
   * one turn of the event loop go together, in one message. */
  liveChunk(capture, data) {
    if (this.closed) return;
    const call = { key: capture.key, format: capture.format, conversation: capture.conversation };
    if (this.delivery !== null) {
      this.delivery.liveChunk(call, data);
      return;
    }
    this.live.push({ call, data });
    if (this.live.length === 1) setImmediate(() => this.#sendLive());
  }

  #sendLive() {
    const items = this.live;
    this.live = [];
    try {
      this.worker?.postMessage({ t: "chunks", items });
    } catch (error) {
      this.log.error("console-client: could not forward live chunks", error);
    }
  }

  uncaptured() {
    this.counts.add("uncaptured");
    if (!this.warnedUncaptured) {
      this.warnedUncaptured = true;
      this.log.warn(
        "console-client: a provider call outside withConversation() is not captured " +
          "(counted as uncaptured)",
      );
    }
  }

  skipped(why) {
    this.counts.add("skipped");
    const first = !this.warnedSkipped.has(why) && this.warnedSkipped.size < 100;
    if (first) this.warnedSkipped.add(why);
    (first ? this.log.warn : this.log.debug)(`console-client: a call is not posted: ${why}`);
  }

  // --- Callers' controls -----------------------------------------------------------------

  /** A fetch that calls `inner` (default: the global fetch at call time) and captures the
   * provider calls made inside withConversation(). */
  fetch(inner) {
    return captureFetch(this, inner);
  }

  /** `response` with its AI SDK UI message stream teed as an `ai-sdk.ui` exchange. */
  captureUIMessageStream(request, response) {
    return captureUI(this, request, response);
  }

  /** This console's replay of `conversation` (see history.js). */
  history(conversation, { timeout, forContinuation } = {}) {
    return history(conversation, { url: this.url, token: this.token, timeout, forContinuation });
  }

  counters() {
    return this.counts.snapshot();
  }

  /** Exchanges not yet delivered: queued, being posted, or spooled. */
  pending() {
    return this.counts.pending;
  }

  async flush(timeout = 10) {
    if (this.delivery !== null) return this.delivery.flush(timeout);
    return this.#ask("flush", timeout);
  }

  async close(timeout = 10) {
    if (this.closed) return this.pending() === 0;
    this.closed = true;
    consoles.delete(this);
    if (this.delivery !== null) return this.delivery.close(timeout);
    const done = await this.#ask("close", timeout);
    await this.worker?.terminate();
    return done;
  }

  /** At the process's exit: what is queued goes to the spool, synchronously. */
  spillSync(timeoutMs) {
    if (this.delivery !== null) {
      this.delivery.spillSync();
      return;
    }
    if (this.worker === null || this.pending() === 0) return;
    this.worker.postMessage({ t: "spill" });
    Atomics.wait(this.counts.array, this.counts.spilledIndex, 0, timeoutMs);
  }
}

let exiting = false;

process.on("beforeExit", () => {
  // The event loop ran dry with exchanges still queued: one flush, bounded by exitTimeout
  // (it keeps the process up while it posts); the process then exits.
  if (exiting) return;
  const pending = [...consoles].filter((c) => c.pending() > 0);
  if (!pending.length) return;
  exiting = true;
  Promise.all(pending.map((c) => c.flush(c.options.exitTimeout))).catch(() => {});
});

process.on("exit", () => {
  for (const c of consoles) {
    try {
      c.spillSync(c.options.exitTimeout * 1000);
    } catch {
      // nothing more can be done
    }
  }
});

/** `execArgv` for the worker: the process's flags without those that only apply to a main
 * script given on the command line (`--input-type`, `-e`/`--eval`, `-p`/`--print` and theirs). */
export function workerArgv(argv) {
  const out = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg.startsWith("--input-type")) {
      if (arg === "--input-type") i++;
      continue;
    }
    if (["-e", "--eval", "-p", "--print", "-pe"].includes(arg)) {
      i++;
      continue;
    }
    if (/^--(eval|print)=/.test(arg)) continue;
    out.push(arg);
  }
  return out;
}
