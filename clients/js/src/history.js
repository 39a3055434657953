// history(): a conversation's replay, GET /api/v1/conversations/{id}/messages.
//
// The console returns {"messages":[ + each message object byte for byte as first received,
// joined by , + ]}. History.raw is that body; History.rawMessages cuts it into the elements'
// exact bytes (a JSON scanner finds where each ends, nothing is re-serialised), and
// History.messages parses them for the next provider call.

import { Wire } from "./wire.js";

/** The console answered something other than the replay (its error is kept). */
export class ConsoleError extends Error {
  constructor(status, body) {
    super(`console answered ${status}: ${String(body).slice(0, 300)}`);
    this.name = "ConsoleError";
    this.status = status;
    this.body = body;
    let info = {};
    try {
      const parsed = JSON.parse(body);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) info = parsed;
    } catch {
      // not JSON: .body has it
    }
    this.error = info.error ?? null;
    this.detail = info.detail ?? null;
  }
}

/** No such conversation in the console (none of its exchanges has arrived yet, or it was
 * deleted). */
export class ConversationNotFound extends ConsoleError {
  constructor(status, body) {
    super(status, body);
    this.name = "ConversationNotFound";
  }
}

export class History {
  constructor(conversation, raw, rawMessages, leftOut) {
    this.conversation = conversation;
    this.raw = raw; // the response body, exactly
    this.rawMessages = rawMessages; // each element's bytes, exactly
    // forContinuation: what the console left out (earlier turns' reasoning), counted.
    this.leftOutElements = leftOut.elements ?? 0;
    this.leftOutBytes = leftOut.bytes ?? 0;
  }

  /** The messages parsed, for the next provider call. */
  get messages() {
    const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
    return this.rawMessages.map((m) => JSON.parse(decoder.decode(m)));
  }
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

function skipSpace(b, i) {
  while (i < b.length && WS.has(b[i])) i++;
  return i;
}

function expect(b, i, text) {
  for (let k = 0; k < text.length; k++) {
    if (b[i + k] !== text.charCodeAt(k)) throw new SyntaxError(`expected ${text} at ${i}`);
  }
  return i + text.length;
}

/** The end of the JSON value starting at `i` of the bytes `b` (UTF-8: every byte of a
 * multi-byte character is >= 0x80, so none is taken for a quote, a bracket or a backslash). */
function valueEnd(b, i) {
  const c = b[i];
  if (c === 0x22) {
    for (i += 1; i < b.length; i++) {
      if (b[i] === 0x5c) i++;
      else if (b[i] === 0x22) return i + 1;
    }
    throw new SyntaxError("unterminated string");
  }
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (; i < b.length; i++) {
      const d = b[i];
      if (d === 0x22) i = valueEnd(b, i) - 1;
      else if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    throw new SyntaxError("unterminated object or array");
  }
  // a number, true, false or null: up to the next delimiter
  let j = i;
  while (j < b.length && !WS.has(b[j]) && b[j] !== 0x2c && b[j] !== 0x5d && b[j] !== 0x7d) j++;
  if (j === i) throw new SyntaxError(`a value was expected at ${i}`);
  return j;
}

/** Each element's exact bytes of {"messages":[...]} (a continuation's trailing
 * "left_out":{...} member allowed), and that member's counts. */
export function splitEnvelope(raw) {
  const b = raw;
  let i = skipSpace(b, 0);
  i = expect(b, i, "{");
  i = skipSpace(b, i);
  i = expect(b, i, '"messages"');
  i = skipSpace(b, i);
  i = expect(b, i, ":");
  i = skipSpace(b, i);
  i = expect(b, i, "[");
  i = skipSpace(b, i);
  const out = [];
  if (b[i] === 0x5d) i += 1;
  else {
    for (;;) {
      const end = valueEnd(b, i);
      // Parsed once to be sure it is JSON (the scanner only finds the end).
      JSON.parse(Buffer.from(b.subarray(i, end)).toString("utf8"));
      out.push(b.subarray(i, end));
      i = skipSpace(b, end);
      if (b[i] === 0x2c) {
        i = skipSpace(b, i + 1);
        continue;
      }
      i = expect(b, i, "]");
      break;
    }
  }
  i = skipSpace(b, i);
  let leftOut = {};
  if (b[i] === 0x2c) {
    i = skipSpace(b, i + 1);
    i = expect(b, i, '"left_out"');
    i = skipSpace(b, i);
    i = expect(b, i, ":");
    i = skipSpace(b, i);
    const end = valueEnd(b, i);
    const counts = JSON.parse(Buffer.from(b.subarray(i, end)).toString("utf8"));
    leftOut = Object.fromEntries(
      Object.entries(counts).filter(([, v]) => Number.isInteger(v)),
    );
    i = skipSpace(b, end);
  }
  i = expect(b, i, "}");
  if (skipSpace(b, i) !== b.length) throw new SyntaxError("the replay does not end with ]}");
  return { messages: out, leftOut };
}

/** The replay of `conversation`. Rejects with ConversationNotFound (404), ConsoleError (any
 * other answer but 200, or a body that is no replay), or an Error (unreachable, timed out). */
export async function history(conversation, { url, token, timeout = 10, forContinuation = false }) {
  const wire = new Wire(url, { timeout, connectTimeout: timeout });
  let answer;
  try {
    let path = `/api/v1/conversations/${encodeURIComponent(conversation)}/messages`;
    if (forContinuation) path += "?for=continuation";
    answer = await wire.request("GET", path, {
      body: null,
      headers: { Authorization: `Bearer ${token}`, "User-Agent": "console-client-js/0.1" },
    });
  } finally {
    wire.close();
  }
  const text = () => answer.body.toString("utf8");
  if (answer.status === 404) throw new ConversationNotFound(404, text());
  if (answer.status !== 200) throw new ConsoleError(answer.status, text());
  let split;
  try {
    split = splitEnvelope(answer.body);
  } catch (error) {
    throw new ConsoleError(200, `not a replay: ${error.message}`);
  }
  return new History(conversation, answer.body, split.messages, split.leftOut);
}
