// Delivery: posts captured exchanges to one console, from a loop of its own. It runs on a worker
// thread (console.js starts it), so none of its work (building bodies, posting, the spool's
// files, live chunks) takes time from the chat's event loop; where no worker can be started it
// runs on the caller's event loop instead, the same code.
//
// The chat path only appends to a bounded in-memory queue (submit: an array push). The loop
// turns each capture into its POST /api/v1/exchanges body and posts it with an Idempotency-Key
// (the capture's key, the same on every attempt, so a retry of a request the console did store
// stores nothing twice).
//
// Order is kept: exchanges of a conversation must reach the console in the order they were made
// (each request's history is matched against what is stored). So the loop posts strictly in
// order, one at a time on one connection; once one exchange is spooled, every later one goes
// behind it in the spool until the spool has drained.
//
// Outcomes of one post:
// - 2xx: sent.
// - 400, 409, 410, 413 and other 4xx: rejected, never retried (the console stored nothing and
//   never will; the error is logged with its field and JSON path).
// - no answer (refused, timed out, cut), 401/403/404/405 (a wrong token or URL: spooled until an
//   operator fixes it), 408, 429, 502, 503, 504: the console is unreachable for now: retried
//   with exponential backoff and jitter, then spooled; the spool head is retried until it goes
//   through.
// - another 5xx: as above, and counted on the exchange; once it has had `maxAttempts` of them,
//   the exchange behind it is tried: if the console takes that one, the head is one exchange it
//   cannot take, and is dropped so it does not hold back all that follow; if that one fails too,
//   the console is what fails (a database or cache down), and nothing is used up.
//
// How to extend: a new outcome is a branch of #classify; a new counter a name in COUNTERS.

import os from "node:os";
import path from "node:path";
import { createHash } from "node:crypto";

import { Unsendable } from "./capture.js";
import { Forwarder } from "./forward.js";
import { Entry, Spool } from "./spool.js";
import { Wire } from "./wire.js";

export const EXCHANGES_PATH = "/api/v1/exchanges";

// The Python client's names, so the two clients' figures add up under one name.
export const COUNTERS = [
  "captured",
  "sent",
  "retried",
  "spooled",
  "dropped",
  "rejected",
  "uncaptured",
  "cancelled",
  "skipped",
  "live_sent",
  "live_dropped",
];

const SENT = "sent";
const REJECTED = "rejected";
const UNREACHABLE = "unreachable"; // retry; not the exchange's fault
const FAILED = "failed"; // retry; counted on the exchange

export const DEFAULTS = Object.freeze({
  timeout: 5,
  connectTimeout: 2,
  queueSize: 1000,
  spoolDir: null,
  spoolMaxFiles: 10_000,
  spoolMaxBytes: 256 * 1024 * 1024,
  maxAttempts: 20,
  retriesBeforeSpool: 2,
  backoff: 0.25,
  backoffMax: 30,
  exitTimeout: 2,
  live: false,
  liveQueueSize: 10_000,
  logger: null,
  worker: true,
});

/** `~/.cache/console-client-js/<hash of url>` ($XDG_CACHE_HOME honoured): not the Python
 * client's directory, whose slots are held by flock, which Node cannot take. */
export function defaultSpoolDir(url) {
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
  const digest = createHash("sha256").update(url).digest("hex").slice(0, 16);
  return path.join(cache, "console-client-js", digest);
}

/** Counters in a plain object (a Delivery on the caller's thread). */
export class Counts {
  constructor() {
    this.values = Object.fromEntries(COUNTERS.map((name) => [name, 0]));
    this.pending = 0;
  }

  add(name, n = 1) {
    this.values[name] += n;
  }

  snapshot() {
    return { ...this.values };
  }

  setPending(n) {
    this.pending = n;
  }
}

/** Counters in shared memory: written by the worker, read by the chat's thread at no cost. */
export class SharedCounts {
  constructor(buffer = new SharedArrayBuffer(4 * (COUNTERS.length + 2))) {
    this.buffer = buffer;
    this.array = new Int32Array(buffer);
  }

  add(name, n = 1) {
    Atomics.add(this.array, COUNTERS.indexOf(name), n);
  }

  snapshot() {
    return Object.fromEntries(COUNTERS.map((name, i) => [name, Atomics.load(this.array, i)]));
  }

  setPending(n) {
    Atomics.store(this.array, COUNTERS.length, n);
  }

  get pending() {
    return Atomics.load(this.array, COUNTERS.length);
  }

  /** A flag the worker raises once it spilled its queue at the process's exit. */
  get spilledIndex() {
    return COUNTERS.length + 1;
  }
}

const sleep = (ms) =>
  new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });

export class Delivery {
  /** `counts`: Counts or SharedCounts; `log`: {error, warn, info, debug}. */
  constructor(url, token, options, { counts, log }) {
    this.url = url;
    this.token = token;
    this.options = Object.freeze({ ...DEFAULTS, ...options, logger: null });
    this.log = log;
    this.counts = counts;
    this.queue = [];
    this.busy = false; // an entry is being posted (or waits for its retry)
    this.holding = 0; // a queued exchange taken out of the queue, not (yet) spooled
    this.inHand = null; // that exchange, while it is posted: spillSync spools it at exit
    this.stopping = false;
    this.closed = false;
    this.wake = false;
    this.spool = null;
    this.spoolFailed = false;
    this.spoolChecked = false;
    this.failures = 0; // consecutive failed posts: the backoff exponent
    this.retryAt = 0; // no post before this (performance.now())
    this.wire = new Wire(url, this.options);
    this.forwarder = null;
    this.warnedSkipped = new Set();
    this.waiters = new Set(); // resolvers woken by #notify
    this.loop = this.#run();
  }

  // --- The chat path ---------------------------------------------------------------------

  /** Queue a finished capture (never waits, never throws to the caller). */
  submit(capture) {
    if (capture.cancelled) this.counts.add("cancelled");
    if (this.closed || this.queue.length >= this.options.queueSize) {
      this.counts.add("dropped");
      const why = this.closed ? "closed" : `full (${this.options.queueSize})`;
      this.log.warn(
        `console-client: dropped an exchange of conversation ${capture.conversation.id}: ` +
          `the queue is ${why}`,
      );
      return;
    }
    this.counts.add("captured");
    this.queue.push(capture);
    this.#notify();
  }

  skipped(why) {
    this.counts.add("skipped");
    const first = !this.warnedSkipped.has(why) && this.warnedSkipped.size < 100;
    if (first) this.warnedSkipped.add(why);
    (first ? this.log.warn : this.log.debug)(`console-client: a call is not posted: ${why}`);
  }

  /** Forward one chunk of a live stream (`call`: its key, format and conversation). */
  liveChunk(call, data) {
    if (this.closed) return;
    this.forwarder ??= new Forwarder(this.url, this.token, {
      timeout: this.options.timeout,
      connectTimeout: this.options.connectTimeout,
      queueSize: this.options.liveQueueSize,
      count: (name) => this.counts.add(name),
      log: this.log,
    });
    this.forwarder.chunk(call, data);
  }

  // --- Callers' controls -----------------------------------------------------------------

  counters() {
    return this.counts.snapshot();
  }

  /** Exchanges not yet delivered: queued, being posted, or spooled. */
  pending() {
    return this.queue.length + this.holding + (this.spool?.length ?? 0);
  }

  #idle() {
    if (this.queue.length || this.busy) return false;
    if (this.spool === null) return this.spoolFailed || this.spoolChecked;
    return this.spool.length === 0;
  }

  /** Wait until everything queued or spooled is delivered (or given up), at most `timeout`
   * seconds. A console that is down is tried once more right away. On time out, what is still
   * queued in memory is written to the spool (a later process delivers it). True when nothing
   * is left. */
  async flush(timeout = 10) {
    const deadline = timeout == null ? Infinity : performance.now() + timeout * 1000;
    this.wake = true;
    this.#notify();
    while (!this.#idle() && !this.closed) {
      const left = deadline - performance.now();
      if (left <= 0) break;
      await this.#signal(Math.min(left, 1000), true); // the caller waits: keep the process up
    }
    const done = this.#idle();
    if (!done) await this.#spill();
    return done;
  }

  /** Flush, then stop. Later submissions are dropped (counted). */
  async close(timeout = 10) {
    const done = await this.flush(timeout);
    this.stopping = true;
    this.closed = true;
    this.#notify();
    this.wire.close();
    this.forwarder?.close();
    await Promise.race([this.loop, sleep(1000)]);
    this.spool?.close();
    return done;
  }

  // --- The loop --------------------------------------------------------------------------

  #notify() {
    this.counts.setPending(this.pending());
    for (const resolve of this.waiters) resolve();
    this.waiters.clear();
  }

  /** Resolves on #notify or after `ms`. The loop's own waits do not keep the process alive;
   * a caller's (`ref`: flush) do. */
  #signal(ms, ref = false) {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      if (!ref) timer.unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.waiters.add(done);
    });
  }

  async #run() {
    this.#openSpool();
    while (!this.stopping) {
      try {
        await this.#step();
      } catch (error) {
        // never die: log, wait a little, go on
        this.log.error("console-client: delivery error", error);
        await sleep(1000);
      }
    }
  }

  #spooled() {
    return this.spool !== null && this.spool.length > 0;
  }

  async #step() {
    if (this.wake) {
      this.wake = false;
      this.retryAt = 0;
    }
    const spooled = this.#spooled();
    if (!this.queue.length && !spooled) {
      await this.#signal(60_000);
      return;
    }
    // Calls come faster than one connection posts them: rather than let the queue fill up and
    // drop, move it to the spool (a file write is much quicker than a post) and post from
    // there, in the same order.
    const backlog = this.#backlogged();
    this.busy = true;
    try {
      if (spooled || backlog) {
        await this.#spill(); // keep order: what is queued goes behind the spool
        await this.#postSpoolHead();
      } else {
        await this.#postQueueHead();
      }
    } finally {
      this.busy = false;
      this.#notify();
    }
  }

  #backlogged() {
    return this.queue.length > Math.floor(this.options.queueSize / 2) && this.spool !== null;
  }

  /** Wait until the backoff allows a post; false if stopping. A flush cuts the wait short.
   * With `spill`, exchanges queued meanwhile go to the spool as they come, so a long outage
   * does not fill the in-memory queue; without, a backlog ends the wait (false: the exchange
   * in hand goes to the spool first, then the queue behind it). */
  async #waitForRetry(spill) {
    for (;;) {
      if (this.stopping || (!spill && this.#backlogged())) return false;
      if (this.wake) {
        this.wake = false;
        this.retryAt = 0;
      }
      const remaining = this.retryAt - performance.now();
      if (remaining <= 0) return true;
      if (spill && this.queue.length) await this.#spill();
      else await this.#signal(remaining);
    }
  }

  async #postQueueHead() {
    const capture = this.queue.shift();
    this.holding = 1;
    this.inHand = { capture, entry: null, spilled: false };
    try {
      await this.#postCapture(capture, this.inHand);
    } finally {
      this.holding = 0;
      this.inHand = null;
    }
  }

  async #postCapture(capture, hand = null) {
    if (capture.live && this.forwarder !== null) {
      // Its live chunks first: the exchange closes the live stream on the console, and a chunk
      // arriving after it would never be shown. Bounded: a slow console delays the record by
      // one timeout at most.
      await this.forwarder.settled(capture.key);
      capture.liveSeq = this.forwarder.seqOf(capture.key);
      this.forwarder.forget(capture.key);
    }
    const entry = this.#entry(capture);
    if (entry === null) return;
    if (hand !== null) hand.entry = entry;
    for (let attempt = 0; attempt <= this.options.retriesBeforeSpool; attempt++) {
      if (attempt) {
        if (!(await this.#waitForRetry(false))) break;
        this.counts.add("retried");
      }
      const outcome = await this.#post(entry, capture.cancelled);
      if (outcome === SENT || outcome === REJECTED) return;
      if (outcome === FAILED) entry.attempts += 1;
      if (hand?.spilled) return; // the process is exiting: spillSync spooled it
    }
    if (hand?.spilled) return;
    await this.#toSpool(entry);
  }

  async #postSpoolHead() {
    if (!(await this.#waitForRetry(true))) return;
    const entry = await this.spool.at(0);
    if (entry === null) return;
    if (entry.attempts || this.failures) this.counts.add("retried");
    const outcome = await this.#post(entry, false);
    if (outcome === SENT || outcome === REJECTED) {
      await this.spool.remove(entry);
      return;
    }
    if (outcome !== FAILED) return;
    entry.attempts += 1;
    if (entry.attempts >= this.options.maxAttempts && (await this.#takesOthers(entry))) {
      await this.spool.remove(entry);
      this.#drop(
        entry,
        `the console answered 5xx ${entry.attempts} times, and took the exchange behind it`,
      );
      return;
    }
    await this.spool.update(entry);
  }

  /** Whether the console takes the exchange behind `head` (posted now, and out of the spool if
   * so): a 5xx the head keeps getting is then the head's, not the console's. */
  async #takesOthers(head) {
    const next = await this.spool.at(1);
    if (next === null || next.key === head.key) return false;
    const outcome = await this.#post(next, false);
    if (outcome === SENT || outcome === REJECTED) {
      await this.spool.remove(next);
      return true;
    }
    return false;
  }

  #entry(capture) {
    try {
      const body = capture.body();
      return new Entry({ key: capture.key, conversation: capture.conversation.id, body });
    } catch (error) {
      if (!(error instanceof Unsendable)) throw error;
      this.skipped(`conversation ${capture.conversation.id}: ${error.message}`);
      return null;
    }
  }

  // --- Posting ---------------------------------------------------------------------------

  async #post(entry, cancelled) {
    let answer;
    try {
      answer = await this.wire.request("POST", EXCHANGES_PATH, {
        body: entry.body,
        headers: {
          Authorization: `Bearer ${this.token}`,
          "Content-Type": "application/json",
          "Idempotency-Key": entry.key,
          "User-Agent": "console-client-js/0.1",
        },
      });
    } catch (error) {
      return this.#failed(UNREACHABLE, error.message, null);
    }
    return this.#classify(entry, answer, cancelled);
  }

  #classify(entry, { status, headers, body }, cancelled) {
    if (status >= 200 && status < 300) {
      this.counts.add("sent");
      this.failures = 0;
      this.retryAt = 0;
      return SENT;
    }
    const text = body.toString("utf8").slice(0, 500);
    const retryAfter = parseRetryAfter(headers["retry-after"]);
    if ([401, 403, 404, 405].includes(status)) {
      this.log.error(
        `console-client: ${this.url}${EXCHANGES_PATH} answered ${status} (check the URL and ` +
          `the service token); exchanges are kept in the spool: ${text}`,
      );
      return this.#failed(UNREACHABLE, `status ${status}`, retryAfter);
    }
    if ([408, 429, 502, 503, 504].includes(status)) {
      return this.#failed(UNREACHABLE, `status ${status}`, retryAfter);
    }
    if (status >= 500) return this.#failed(FAILED, `status ${status}: ${text}`, retryAfter);
    this.counts.add("rejected");
    this.failures = 0;
    const note = cancelled ? " (a stream cancelled before its end)" : "";
    this.log.warn(
      `console-client: the console refused an exchange of conversation ${entry.conversation} ` +
        `with ${status}${note}: ${text}`,
    );
    return REJECTED;
  }

  #failed(outcome, why, retryAfter) {
    this.failures += 1;
    const { backoff, backoffMax } = this.options;
    const ceiling = Math.min(backoffMax, backoff * 2 ** this.failures);
    // Equal jitter: at least half the ceiling, so a crowd of clients spreads out without any
    // of them hammering a console that just came back.
    let delay = ceiling / 2 + (Math.random() * ceiling) / 2;
    if (retryAfter !== null) delay = Math.max(delay, Math.min(retryAfter, backoffMax));
    this.retryAt = performance.now() + delay * 1000;
    (this.failures === 1 ? this.log.warn : this.log.debug)(
      `console-client: could not post to ${this.url} (${why}); retrying in ${delay.toFixed(1)} s`,
    );
    return outcome;
  }

  // --- The spool -------------------------------------------------------------------------

  #openSpool() {
    const base = this.options.spoolDir ?? defaultSpoolDir(this.url);
    try {
      this.spool = new Spool(String(base), {
        maxFiles: this.options.spoolMaxFiles,
        maxBytes: this.options.spoolMaxBytes,
        dropped: (entry, why) => this.#drop(entry, why),
        log: this.log,
      });
      if (this.spool.length) {
        this.log.info(
          `console-client: ${this.spool.length} exchange(s) left in the spool ` +
            `${this.spool.dir} by an earlier run`,
        );
      }
    } catch (error) {
      this.spoolFailed = true;
      this.log.error(
        `console-client: no spool at ${base} (${error.message}): exchanges the console cannot ` +
          "take now are dropped",
      );
    }
    this.spoolChecked = true;
    this.#notify();
  }

  async #toSpool(entry) {
    if (this.spool === null) {
      this.#drop(entry, "there is no spool");
      return;
    }
    try {
      await this.spool.append(entry);
    } catch (error) {
      this.#drop(entry, `the spool cannot be written: ${error.message}`);
      return;
    }
    if (entry.path !== null) this.counts.add("spooled");
  }

  /** Move everything queued in memory to the spool's tail, in order. */
  async #spill() {
    while (this.queue.length) {
      const entry = this.#entry(this.queue.shift());
      if (entry !== null) await this.#toSpool(entry);
    }
  }

  /** The same, synchronously, at the process's exit. */
  spillSync() {
    // The exchange being posted (the console down: between two attempts) goes first, ahead of
    // the queue behind it; the post in flight, if it lands after all, is the same
    // Idempotency-Key.
    // Spooled asynchronously but not yet written (a flush that timed out spills the queue so):
    // first, they are older than the rest.
    for (const entry of this.spool?.settleSync() ?? []) {
      if (entry.path !== null) this.counts.add("spooled");
    }
    const hand = this.inHand;
    if (hand !== null && !hand.spilled) {
      hand.spilled = true;
      this.queue.unshift(hand.entry === null ? hand.capture : { spilledEntry: hand.entry });
    }
    while (this.queue.length) {
      const capture = this.queue.shift();
      try {
        const entry = capture.spilledEntry ?? this.#entry(capture);
        if (entry === null) continue;
        if (this.spool === null) this.#drop(entry, "there is no spool");
        else {
          this.spool.appendSync(entry);
          if (entry.path !== null) this.counts.add("spooled");
        }
      } catch (error) {
        this.counts.add("dropped");
        this.log.error("console-client: could not spool an exchange at exit", error);
      }
    }
    this.counts.setPending(this.pending());
  }

  #drop(entry, why) {
    this.counts.add("dropped");
    this.log.warn(
      `console-client: dropped exchange ${entry.key} of conversation ` +
        `${entry.conversation || "?"}: ${why}`,
    );
  }
}

function parseRetryAfter(value) {
  if (!value) return null;
  const seconds = Number(value);
  return Number.isFinite(seconds) ? Math.max(0, seconds) : null; // an HTTP date: the backoff
}
