// Live forwarding (live: true): each streamed provider call is posted to
// POST /api/v1/live/chunks as it arrives, so a supervisor can watch the answer stream on the
// conversation page before taking the chat over.
//
// Best effort, by design. A chunk is useful now or never: the tee only appends it to its call's
// pending list (at most `liveQueueSize` chunks wait in all; past that one is dropped, counted
// `live_dropped`), and this forwarder posts it once, with the console's timeouts, never spooled
// or retried. While a chunk of a call is being posted, the pieces that arrive meanwhile wait and
// go out together as the call's next chunk: one post per round trip at most, however fast the
// provider streams, and no wait at all when it streams slower than that. The exchange posted
// when the response ends is the record and carries every byte; it names the chunks' `exchange`
// key in `live_exchange`, which closes the live stream on the console, so it is posted only once
// its call's chunks are done (Forwarder.settled). Runs where the delivery runs (console.js).
//
// Chunks are sent as text: a character cut between two pieces goes with the later one (a
// streaming UTF-8 decoder); a stream that is not UTF-8 stops being forwarded.

import { Wire } from "./wire.js";

export const LIVE_PATH = "/api/v1/live/chunks";
const MAX_CHUNK_BYTES = 64 * 1024; // well under the console's LIVE_MAX_CHUNK_CHARS (256 KiB)
const CONCURRENCY = 4; // calls posted at once (each call's chunks stay one at a time, in order)

export class Forwarder {
  constructor(url, token, { timeout, connectTimeout, queueSize, count, log }) {
    this.token = token;
    this.wire = new Wire(url, { timeout, connectTimeout, maxSockets: CONCURRENCY });
    this.timeoutMs = timeout * 1000;
    this.queueSize = queueSize;
    this.count = count;
    this.log = log;
    this.waiting = 0; // pieces pending, all calls
    this.ready = []; // calls with pieces pending and no post in flight, oldest first
    this.inFlight = 0;
    this.closed = false;
    this.calls = new Map(); // the call's key -> its live state
  }

  /** One piece of a call's stream (`call`: its key, format and conversation), from the tee
   * (never throws, never waits). */
  chunk(call, data) {
    if (this.closed) return;
    if (this.waiting >= this.queueSize) {
      this.count("live_dropped");
      return;
    }
    let live = this.calls.get(call.key);
    if (live === undefined) {
      live = {
        call,
        seq: 0,
        pieces: [],
        decoder: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }),
        off: false, // not UTF-8: the rest of the stream is not forwarded
        posting: false,
        settle: [],
      };
      this.calls.set(call.key, live);
    }
    if (live.off) return;
    live.pieces.push(data);
    this.waiting += 1;
    if (!live.posting && live.pieces.length === 1) {
      this.ready.push(live);
      if (this.ready.length === 1) setImmediate(() => this.#pump());
    }
  }

  /** Chunks posted (or being posted) for the call `key`: the next one's seq. */
  seqOf(key) {
    return this.calls.get(key)?.seq ?? 0;
  }

  /** Resolves once every chunk of the call `key` is posted or given up, or after `timeoutMs`;
   * the call's state is then forgotten (its exchange is about to close the live stream). */
  async settled(key, timeoutMs = this.timeoutMs) {
    const live = this.calls.get(key);
    if (live === undefined) return true;
    let done = this.#isSettled(live);
    if (!done) {
      done = await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        timer.unref();
        live.settle.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    }
    return done;
  }

  forget(key) {
    const live = this.calls.get(key);
    if (live === undefined) return;
    this.calls.delete(key);
    this.waiting -= live.pieces.length;
    live.pieces.length = 0;
    live.off = true;
  }

  #isSettled(live) {
    return live.pieces.length === 0 && !live.posting;
  }

  #maybeSettled(live) {
    if (!this.#isSettled(live)) return;
    for (const resolve of live.settle.splice(0)) resolve();
  }

  #pump() {
    while (this.ready.length && this.inFlight < CONCURRENCY && !this.closed) {
      this.#post(this.ready.shift());
    }
  }

  async #post(live) {
    const taken = [];
    let size = 0;
    while (
      live.pieces.length &&
      (taken.length === 0 || size + live.pieces[0].length <= MAX_CHUNK_BYTES)
    ) {
      const piece = live.pieces.shift();
      taken.push(piece);
      size += piece.length;
    }
    this.waiting -= taken.length;
    let text = "";
    try {
      for (const piece of taken) text += live.decoder.decode(piece, { stream: true });
    } catch {
      live.off = true;
      this.waiting -= live.pieces.length;
      live.pieces.length = 0;
      this.#maybeSettled(live);
      return;
    }
    if (text) {
      live.posting = true;
      this.inFlight += 1;
      const seq = live.seq;
      live.seq += 1;
      await this.#send(live.call, seq, text);
      this.inFlight -= 1;
      live.posting = false;
    }
    if (live.pieces.length) this.ready.push(live);
    else this.#maybeSettled(live);
    this.#pump();
  }

  async #send(call, seq, text) {
    const { conversation } = call;
    const body = {
      conversation: conversation.id,
      customer: conversation.customer,
      format: call.format,
      exchange: call.key,
      seq,
      chunk: text,
      at: new Date().toISOString(),
    };
    if (Object.keys(conversation.labels).length) body.labels = conversation.labels;
    try {
      const answer = await this.wire.request("POST", LIVE_PATH, {
        body: Buffer.from(JSON.stringify(body), "utf8"),
        headers: {
          Authorization: `Bearer ${this.token}`,
          "Content-Type": "application/json",
          "User-Agent": "console-client-js/0.1",
        },
      });
      if (answer.status >= 200 && answer.status < 300) this.count("live_sent");
      else {
        this.count("live_dropped");
        this.log.debug(`console-client: the console refused a live chunk: ${answer.status}`);
      }
    } catch (error) {
      this.count("live_dropped");
      this.log.debug(`console-client: a live chunk was not delivered: ${error.message}`);
    }
  }

  close() {
    this.closed = true;
    this.wire.close();
  }
}
