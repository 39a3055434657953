// Which conversation a provider call belongs to: an AsyncLocalStorage set by withConversation().
//
// Every promise, timer and callback started inside `fn` sees the conversation, and nothing
// outside it does. Nothing of it is ever added to the provider request.

import { AsyncLocalStorage } from "node:async_hooks";

// The console's limits (POST /api/v1/exchanges), counted in characters as the console counts
// them (code points): checked here so a mistake shows where the conversation is named, not as
// exchanges the console refuses later.
export const MAX_ID_CHARS = 200;
export const MAX_QUEUE_CHARS = 100;
export const MAX_LABELS_CHARS = 4096;
export const CAPTURES = ["provider", "ui"];

const storage = new AsyncLocalStorage();

/** The conversation of the running code, or undefined. */
export function current() {
  return storage.getStore();
}

function chars(text) {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

function checkId(name, value) {
  if (typeof value !== "string") {
    throw new TypeError(`withConversation: ${name} must be a string, not ${typeof value}`);
  }
  const n = chars(value);
  if (n < 1 || n > MAX_ID_CHARS) {
    throw new RangeError(`withConversation: ${name} must be 1 to ${MAX_ID_CHARS} characters`);
  }
  return value;
}

// The length of `value` as the console measures labels: Python's json.dumps (", " and ": "
// between items), in characters.
function jsonChars(value) {
  if (Array.isArray(value)) {
    let n = 2 + Math.max(0, value.length - 1) * 2;
    for (const item of value) n += jsonChars(item);
    return n;
  }
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value);
    let n = 2 + Math.max(0, keys.length - 1) * 2;
    for (const key of keys) n += chars(JSON.stringify(key)) + 2 + jsonChars(value[key]);
    return n;
  }
  return chars(String(JSON.stringify(value)));
}

function checkLabels(labels) {
  if (labels === undefined || labels === null) return Object.freeze({});
  if (typeof labels !== "object" || Array.isArray(labels)) {
    throw new TypeError("withConversation: labels must be an object");
  }
  let copy;
  try {
    copy = JSON.parse(JSON.stringify(labels));
  } catch (error) {
    throw new TypeError(`withConversation: labels must be JSON: ${error.message}`);
  }
  const queue = copy.queue;
  if (
    queue !== undefined &&
    (typeof queue !== "string" || chars(queue) < 1 || chars(queue) > MAX_QUEUE_CHARS)
  ) {
    throw new RangeError(
      `withConversation: labels.queue must be a string of 1 to ${MAX_QUEUE_CHARS} characters`,
    );
  }
  if (jsonChars(copy) > MAX_LABELS_CHARS) {
    throw new RangeError("withConversation: labels are limited to 4 KB of JSON");
  }
  return Object.freeze(copy);
}

/**
 * Run `fn` with provider calls (or, with capture "ui", the AI SDK UI message stream) posted as
 * exchanges of conversation `id`, of the data subject `customer`, with `labels`. Returns what
 * `fn` returns.
 *
 * The one place the client throws: a wrong type or an id the console would refuse is a
 * programming mistake, better seen where it is made than as exchanges lost later.
 */
export function withConversation({ id, customer, labels, capture = "provider" } = {}, fn) {
  if (typeof fn !== "function") throw new TypeError("withConversation: fn must be a function");
  if (!CAPTURES.includes(capture)) {
    throw new RangeError(`withConversation: capture must be "provider" or "ui", not ${capture}`);
  }
  const conversation = Object.freeze({
    id: checkId("id", id),
    customer: checkId("customer", customer),
    labels: checkLabels(labels),
    capture,
  });
  return storage.run(conversation, fn);
}
