// Capture every provider exchange of a Node chat backend, byte for byte, for the support console.
//
//   const fetch = consoleFetch({ url: CONSOLE_URL, token: CONSOLE_TOKEN });
//   const anthropic = createAnthropic({ fetch });          // the AI SDK; or new Anthropic({ fetch })
//   await withConversation({ id: "c-1", customer: "u-9" }, () => streamText({ model, ... }));
//
// consoleFetch wraps fetch: the request body as sent and the response bytes (or SSE text) as
// received are captured while the caller reads them (tee.js), forwarded live (forward.js) and
// posted to POST /api/v1/exchanges from a bounded queue, with retries and an on-disk spool
// (delivery.js). Provider calls outside withConversation() are not captured (counted).
//
// The guide is docs/client.md in the console's repository. How to extend: a provider format is
// a row of capture-table.json; a counter a name in delivery.js's COUNTERS.

import { Console, consoles } from "./console.js";
import { COUNTERS, DEFAULTS } from "./delivery.js";
import { history as replay } from "./history.js";

export { withConversation } from "./context.js";
export { ConsoleError, ConversationNotFound, History } from "./history.js";
export { formatFor } from "./capture.js";

export const version = "0.1.0";

const registry = new Map(); // "url\ntoken" -> Console

function checkUrl(url) {
  if (typeof url !== "string") throw new TypeError("console-client: url must be a string");
  let parts;
  try {
    parts = new URL(url);
  } catch {
    parts = null;
  }
  if (!parts || !["http:", "https:"].includes(parts.protocol) || !parts.hostname) {
    throw new TypeError(`console-client: url must be http(s)://host[:port], not ${url}`);
  }
  return url.replace(/\/+$/, "");
}

function checkToken(token) {
  if (typeof token !== "string" || !token) {
    throw new TypeError("console-client: token must be a non-empty string (a service token)");
  }
  return token;
}

function checkOptions(options) {
  for (const name of Object.keys(options)) {
    if (!(name in DEFAULTS)) throw new TypeError(`console-client: unknown option ${name}`);
  }
  return options;
}

/** The Console for `url` and `token`: made on first use, the same one afterwards (its options
 * are those of the first call). */
export function consoleFor({ url, token, ...options } = {}) {
  const key = `${checkUrl(url)}\n${checkToken(token)}`;
  let found = registry.get(key);
  if (found === undefined || found.closed) {
    found = new Console(checkUrl(url), token, checkOptions(options));
    registry.set(key, found);
  }
  return found;
}

/** A fetch to hand to an AI SDK provider or an official SDK client: it calls `fetch` (default:
 * the global fetch) and captures the provider calls made inside withConversation(). */
export function consoleFetch({ fetch, ...options } = {}) {
  return consoleFor(options).fetch(fetch);
}

function only(what) {
  const open = [...registry.values()].filter((c) => !c.closed);
  if (open.length !== 1) throw new TypeError(`console-client: ${what} needs { url, token }`);
  return open[0];
}

/** `response` (from toUIMessageStreamResponse) with its UI message stream teed, posted as an
 * `ai-sdk.ui` exchange of the conversation of withConversation({ capture: "ui" }) whose
 * request is `request`, the chat request body exactly as the browser sent it. */
export function captureUIMessageStream(request, response, { url, token } = {}) {
  let target;
  try {
    target =
      url !== undefined && token !== undefined
        ? consoleFor({ url, token })
        : only("captureUIMessageStream");
  } catch (error) {
    globalThis.console.error(error.message);
    return response;
  }
  return target.captureUIMessageStream(request, response);
}

/** The replay of `conversation`: .raw the body byte for byte, .rawMessages each element's bytes,
 * .messages parsed. `url` and `token` default to those of the one console made (consoleFetch).
 * Exchanges still queued are not in it yet: flush() first when that matters. */
export async function history(conversation, { url, token, timeout, forContinuation } = {}) {
  if (url === undefined || token === undefined) {
    const target = only("history");
    url ??= target.url;
    token ??= target.token;
  }
  return replay(conversation, { url: checkUrl(url), token: checkToken(token), timeout, forContinuation });
}

/** Deliver what every console has queued or spooled, within `timeout` seconds in all. What is
 * still queued then goes to the spool. True when nothing is left. */
export async function flush(timeout = 10) {
  const deadline = performance.now() + timeout * 1000;
  let done = true;
  for (const target of [...consoles]) {
    const left = Math.max(0, deadline - performance.now()) / 1000;
    done = (await target.flush(left)) && done;
  }
  return done;
}

/** The counters of every console of this process, added up. */
export function counters() {
  const totals = Object.fromEntries(COUNTERS.map((name) => [name, 0]));
  for (const target of consoles) {
    for (const [name, value] of Object.entries(target.counters())) totals[name] += value;
  }
  return totals;
}

/** Flush and stop every console. Fetches made with them keep working; their later exchanges
 * are dropped and counted. For the end of a process (a SIGTERM handler) or a test. */
export async function shutdown(timeout = 10) {
  const targets = [...registry.values()];
  registry.clear();
  const results = await Promise.all(targets.map((t) => t.close(timeout)));
  return results.every(Boolean);
}
