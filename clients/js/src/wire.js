// Requests to the console: node:http(s) on kept-alive connections.
//
// Not fetch: the posts share the event loop with the chat, and node:http spends a fraction of
// the CPU per request that fetch does (bench/client_js.mjs runs the chat beside them). The
// console is reached directly (no proxy from the environment): it is the chat backend's own
// service.

import http from "node:http";
import https from "node:https";

export class Unreachable extends Error {}

export class Wire {
  /**
   * @param {string} url the console's base URL
   * @param {{timeout: number, connectTimeout: number, maxSockets?: number}} options seconds
   */
  constructor(url, { timeout, connectTimeout, maxSockets = 1 }) {
    const parts = new URL(url);
    this.https = parts.protocol === "https:";
    this.host = parts.hostname.replace(/^\[|\]$/g, "");
    this.port = parts.port ? Number(parts.port) : this.https ? 443 : 80;
    this.prefix = parts.pathname.replace(/\/+$/, "");
    this.timeoutMs = timeout * 1000;
    this.connectTimeoutMs = connectTimeout * 1000;
    const Agent = this.https ? https.Agent : http.Agent;
    this.agent = new Agent({ keepAlive: true, maxSockets, scheduling: "lifo" });
    this.requests = new Set();
  }

  /** Resolves with {status, headers, body} for any answer; rejects with Unreachable when none
   * came (refused, timed out, reset). */
  async request(method, path, { body, headers }) {
    try {
      return await this.#once(method, path, body, headers);
    } catch (error) {
      // A kept-alive connection the console had closed: once more on a new one (a repeated
      // post is harmless, it carries the same Idempotency-Key).
      if (error.reused) return await this.#once(method, path, body, headers);
      throw error;
    }
  }

  #once(method, path, body, headers) {
    return new Promise((resolve, reject) => {
      const lib = this.https ? https : http;
      const all = { ...headers };
      if (body != null) all["Content-Length"] = String(body.length);
      const req = lib.request({
        host: this.host,
        port: this.port,
        method,
        path: this.prefix + path,
        headers: all,
        agent: this.agent,
      });
      this.requests.add(req);
      let connecting = null;
      const fail = (why, error) => {
        clearTimeout(connecting);
        const failure = new Unreachable(`${why}${error ? `: ${error.message}` : ""}`);
        failure.code = error?.code;
        // Reset before any answer on a socket used before: the console closed it meanwhile.
        failure.reused =
          req.reusedSocket && ["ECONNRESET", "EPIPE"].includes(error?.code) && !req.answered;
        reject(failure);
      };
      req.on("socket", (socket) => {
        if (socket.connecting) {
          connecting = setTimeout(
            () => req.destroy(new Error(`no connection in ${this.connectTimeoutMs} ms`)),
            this.connectTimeoutMs,
          );
          socket.once("connect", () => clearTimeout(connecting));
        }
      });
      req.setTimeout(this.timeoutMs, () =>
        req.destroy(new Error(`no answer in ${this.timeoutMs} ms`)),
      );
      req.on("error", (error) => fail("the console is unreachable", error));
      req.on("close", () => this.requests.delete(req));
      req.on("response", (res) => {
        req.answered = true;
        const parts = [];
        res.on("data", (part) => parts.push(part));
        res.on("error", (error) => fail("the answer was cut off", error));
        res.on("end", () => {
          clearTimeout(connecting);
          resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts) });
        });
      });
      req.end(body ?? undefined);
    });
  }

  /** Ends every request in flight and every kept-alive connection. */
  close() {
    for (const req of this.requests) req.destroy(new Error("closed"));
    this.agent.destroy();
  }
}
