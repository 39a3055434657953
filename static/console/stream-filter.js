// stream-filter.js: the console's inbound filter as one dependency-free ES module.
//
// Feed it the raw SSE text of a provider stream, cut anywhere; it returns only visible events:
//   {type: "text", block, text}                    the answer's text, as it streams
//   {type: "thinking", state: "started"|"progress"|"stopped", block, seconds, tokens}
//   {type: "tool", state: "started", block, name} / {type: "tool", state: "result", block, status}
//   {type: "reset"}                                 a new generation replaced what was shown
//   {type: "finished", reason} / {type: "error", code}
// Thinking, reasoning summaries, signatures and encrypted reasoning never leave it: a thinking
// block is counted (characters / 4 as a token estimate) and its text dropped.
//
// The rules are the server's (conversations/formats/<name>/live.py): a block's type comes from
// the event that opens it (content_block_start's content_block.type, output_item.added's
// item.type, content_part.added's part.type, text-start / reasoning-start, a Chat delta's key),
// kept in an index -> type map, and a delta is shown only when the block its index names is of a
// visible type. Nothing is guessed from a delta's shape. A visible block of a type INLINE names
// may open with the model's <think>...</think> (servers without a reasoning parser): that span is
// thinking, counted and never shown, even when a tag is cut across chunks, and whichever way the
// tag is spelled: its name in any case, attributes after it (<think reason="x">), whitespace
// before a closing tag's ">" (the rule of conversations/formats/profile.py's Inline). The server also
// redacts; this module does not (a customer widget shows the customer their own words).
// CLASSES and INLINE are the formats' profiles (conversations/formats/<name>/profile.py); the
// test suite holds them equal.
//
//   import { createFilter } from "./stream-filter.js";
//   const f = createFilter("anthropic.messages");
//   for (const event of f.feed(chunkText)) render(event);
//   for (const event of f.close()) render(event);

export const CLASSES = {
  "anthropic.messages": {
    visible: ["text"],
    audit: ["tool_use", "tool_result", "server_tool_use", "*_tool_result", "mcp_tool_use", "mcp_tool_result"],
    never: ["thinking", "redacted_thinking"],
  },
  "openai.responses": {
    visible: ["message", "output_text", "refusal", "input_text"],
    audit: ["function_call", "function_call_output", "*_call", "*_call_output"],
    never: ["reasoning"],
  },
  "openai.chat": {
    visible: ["content", "refusal"],
    audit: ["tool_calls", "tool"],
    never: ["reasoning_content", "reasoning", "think"],
  },
  "ai-sdk.ui": {
    visible: ["text"],
    audit: ["tool-*", "dynamic-tool"],
    never: ["reasoning", "think"],
  },
};

// Deliberation written into a visible block's text, per format: the element `tag` at the start
// of a block of one of `types` (after whitespace) is a `never` block of its own.
export const INLINE = {
  "openai.chat": { types: ["content"], never: "think", tag: "think" },
  "ai-sdk.ui": { types: ["text"], never: "think", tag: "think" },
};

const WS = " \t\n\r";
const ATTRS = WS + "/";

// The inline span read piece by piece (conversations/formats/live.py's InlineSplit): its state is
// where the tags are matched (and which letters of the opening name came in upper case) and the
// whitespace held, never a character of the deliberation. Returns [visible text, deliberation
// characters read].
function splitFeed(rule, s, piece) {
  const name = `<${rule.tag.toLowerCase()}`;
  const close = `</${rule.tag.toLowerCase()}`;
  const held = () => [...name.slice(0, s.m)].map((c, i) => ((s.up >> i) & 1 ? c.toUpperCase() : c)).join("");
  const visible = [];
  let hidden = 0;
  let i = 0;
  while (i < piece.length) {
    if (s.at === "visible") {
      visible.push(piece.slice(i));
      break;
    }
    const c = piece[i];
    if (s.at === "start") {
      if (s.m === 0 && WS.includes(c)) s.ws += c;
      else if (s.m < name.length && c.toLowerCase() === name[s.m]) {
        if (c !== c.toLowerCase()) s.up |= 1 << s.m;
        s.m += 1;
      } else if (s.m === name.length && (c === ">" || ATTRS.includes(c))) {
        hidden += name.length + 1;
        Object.assign(s, { at: c === ">" ? "inside" : "attrs", ws: "", m: 0, up: 0 });
      } else {
        visible.push(s.ws + held());
        Object.assign(s, { at: "visible", ws: "", m: 0, up: 0 });
        continue;
      }
    } else if (s.at === "attrs") {
      hidden += 1;
      if (c === ">") s.at = "inside";
    } else if (s.at === "inside") {
      hidden += 1;
      if (s.m === close.length) {
        if (c === ">") Object.assign(s, { at: "after", m: 0 });
        else if (!WS.includes(c)) s.m = advance(close, 0, c.toLowerCase());
      } else s.m = advance(close, s.m, c.toLowerCase());
    } else if (s.at === "after" && !WS.includes(c)) {
      s.at = "visible";
      continue;
    }
    i += 1;
  }
  return [visible.join(""), hidden];
}

function advance(tag, matched, c) {
  const text = tag.slice(0, matched) + c;
  for (let k = Math.min(tag.length, text.length); k > 0; k--) if (text.endsWith(tag.slice(0, k))) return k;
  return 0;
}

const PROGRESS_TOKENS = 50;

function matches(type, patterns) {
  return patterns.some((p) =>
    p.includes("*") ? new RegExp("^" + p.split("*").map(escape).join(".*") + "$").test(type) : p === type,
  );
}
function escape(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// The class of a provider block type: NEVER first, UNKNOWN (shown as nothing) otherwise.
export function classify(format, type) {
  const c = CLASSES[format];
  if (!c) return "unknown";
  if (matches(type, c.never)) return "never";
  if (matches(type, c.visible)) return "visible";
  if (matches(type, c.audit)) return "audit";
  return "unknown";
}

const tokens = (chars) => Math.floor((chars + 3) / 4);

// The indicator's words: "Thinking… 14 s · ~1,200 tokens".
export function thinkingLabel(seconds, tokenCount) {
  const s = Math.max(0, Math.round(seconds));
  const t = tokenCount > 0 ? ` · ~${Math.round(tokenCount).toLocaleString("en-US")} tokens` : "";
  return `Thinking… ${s} s${t}`;
}

// SSE framing as the WHATWG spec reads it: LF, CRLF or CR line ends; data lines joined by LF.
function* sseEvents(text) {
  let data = [];
  let has = false;
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === "") {
      if (has) yield data.join("\n");
      data = [];
      has = false;
      continue;
    }
    if (line.startsWith(":")) continue;
    const i = line.indexOf(":");
    const name = i < 0 ? line : line.slice(0, i);
    let value = i < 0 ? "" : line.slice(i + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "data") {
      data.push(value);
      has = true;
    }
  }
  if (has) yield data.join("\n");
}

const EVENT_END = /(?:\r\n|\r(?!$)|\n)(?:\r\n|\r(?!$)|\n)/g;

class Filter {
  constructor(format) {
    this.format = format;
    this.blocks = new Map(); // key -> {type, cls, chars, t0, done, name}
    this.tail = "";
    this.finished = false;
    this.reason = null;
    this.order = 0;
    this.out = [];
    this.now = () => Date.now() / 1000;
  }

  feed(chunk) {
    this.out = [];
    const text = this.tail + chunk;
    let end = 0;
    EVENT_END.lastIndex = 0;
    for (let m; (m = EVENT_END.exec(text)); ) end = m.index + m[0].length;
    this.tail = text.slice(end);
    if (end) {
      for (const data of sseEvents(text.slice(0, end))) {
        if (this.finished) break;
        this.data(data);
      }
    }
    return this.out;
  }

  close() {
    this.out = [];
    if (this.tail.trim() && !this.finished) for (const data of sseEvents(this.tail)) this.data(data);
    this.tail = "";
    this.endAll();
    return this.out;
  }

  data(data) {
    if (data.trim() === "[DONE]") return this.finish(this.reason || "stop");
    let value;
    try {
      value = JSON.parse(data);
    } catch {
      return;
    }
    if (value && typeof value === "object" && !Array.isArray(value)) this.event(value);
  }

  key() {
    this.order += 1;
    return `k${this.order}`;
  }

  open(key, type, name) {
    const b = this.blocks.get(key);
    if (b && !b.done) return;
    const cls = classify(this.format, type);
    this.blocks.set(key, { type, cls, chars: 0, t0: this.now(), done: false, name });
    const rule = INLINE[this.format];
    if (cls === "visible" && rule && rule.types.includes(type)) {
      this.blocks.get(key).inline = { at: "start", ws: "", m: 0, up: 0 };
    }
    if (cls === "never") this.emit({ type: "thinking", state: "started", block: key, seconds: 0, tokens: 0 });
    else if (cls === "audit") this.emit({ type: "tool", state: "started", block: key, name: name || type });
  }

  cls(key) {
    const b = this.blocks.get(key);
    return b && !b.done ? b.cls : null;
  }

  text(key, piece) {
    if (this.cls(key) !== "visible" || !piece) return;
    const b = this.blocks.get(key);
    if (b.inline) {
      const rule = INLINE[this.format];
      const [visible, hidden] = splitFeed(rule, b.inline, piece);
      const span = `${key}.${rule.never}`;
      if (hidden) {
        this.open(span, rule.never);
        this.countChars(span, hidden);
      }
      if (b.inline.at !== "inside" && b.inline.at !== "attrs") this.end(span);
      piece = visible;
      if (!piece) return;
    }
    this.emit({ type: "text", block: key, text: piece });
  }

  count(key, piece) {
    this.countChars(key, piece.length);
  }

  countChars(key, chars) {
    const b = this.blocks.get(key);
    if (!b || b.done || b.cls !== "never") return;
    const before = Math.floor(tokens(b.chars) / PROGRESS_TOKENS);
    b.chars += chars;
    if (Math.floor(tokens(b.chars) / PROGRESS_TOKENS) > before) {
      this.emit({ type: "thinking", state: "progress", block: key, seconds: this.seconds(b), tokens: tokens(b.chars) });
    }
  }

  end(key, status) {
    const b = this.blocks.get(key);
    if (!b || b.done) return;
    b.done = true;
    if (b.inline) {
      const rule = INLINE[this.format];
      // Whitespace alone was text; a tag cut off before its end was a span that never began.
      const held = b.inline.at === "start" && b.inline.m === 0 ? b.inline.ws : "";
      this.end(`${key}.${rule.never}`);
      if (held) this.emit({ type: "text", block: key, text: held });
    }
    if (b.cls === "never") {
      this.emit({ type: "thinking", state: "stopped", block: key, seconds: this.seconds(b), tokens: tokens(b.chars) });
    } else if (b.cls === "audit" && status) {
      this.emit({ type: "tool", state: "result", block: key, status });
    }
  }

  result(key, status) {
    const b = this.blocks.get(key);
    if (b && b.cls === "audit") {
      b.done = true;
      this.emit({ type: "tool", state: "result", block: key, status });
    }
  }

  reset() {
    this.blocks = new Map();
    this.emit({ type: "reset" });
  }

  finish(reason) {
    if (this.finished) return;
    this.endAll();
    this.finished = true;
    this.emit({ type: "finished", reason: reason || "stop" });
  }

  error(code) {
    if (this.finished) return;
    this.endAll();
    this.finished = true;
    this.emit({ type: "error", code });
  }

  endAll() {
    for (const key of [...this.blocks.keys()]) this.end(key);
  }

  seconds(b) {
    return Math.max(0, Math.round((this.now() - b.t0) * 1000) / 1000);
  }

  emit(event) {
    this.out.push(event);
  }
}

const str = (v) => (typeof v === "string" ? v : null);
const int = (v) => (Number.isInteger(v) ? v : null);

class AnthropicFilter extends Filter {
  // delta type -> [field of the delta, key of the block] (the parser's _STRING_DELTAS, appending)
  static APPENDS = { text_delta: ["text", "text"], thinking_delta: ["thinking", "thinking"] };
  static EVENTS = new Set([
    "message_start", "content_block_start", "content_block_delta", "content_block_stop",
    "message_delta", "message_stop", "error", "ping",
  ]);

  event(d) {
    const kind = d.type;
    if (!AnthropicFilter.EVENTS.has(kind)) return;
    if (kind === "message_start") {
      if (this.blocks.size) this.reset();
      const content = d.message && Array.isArray(d.message.content) ? d.message.content : [];
      content.forEach((b, i) => this.start(String(i), b));
    } else if (kind === "content_block_start") {
      if (int(d.index) !== null) this.start(String(d.index), d.content_block);
    } else if (kind === "content_block_delta") {
      const delta = d.delta;
      if (int(d.index) === null || !delta || typeof delta !== "object") return;
      const rule = AnthropicFilter.APPENDS[delta.type];
      const key = String(d.index);
      if (!rule || !this.blocks.has(key)) return;
      const piece = str(delta[rule[0]]) || "";
      if (rule[1] === "text") this.text(key, piece);
      else this.count(key, piece);
    } else if (kind === "content_block_stop") {
      if (int(d.index) !== null) this.end(String(d.index));
    } else if (kind === "message_delta") {
      if (d.delta && str(d.delta.stop_reason)) this.reason = d.delta.stop_reason;
    } else if (kind === "message_stop") {
      this.finish(this.reason);
    } else if (kind === "error") {
      this.error((d.error && str(d.error.type)) || "error");
    }
  }

  start(key, block) {
    if (!block || typeof block !== "object" || typeof block.type !== "string") return;
    const type = block.type;
    const cls = classify(this.format, type);
    if (cls === "audit" && !type.endsWith("tool_use")) {
      const kind = block.content && typeof block.content === "object" ? block.content.type : null;
      const failed = block.is_error === true || (typeof kind === "string" && kind.endsWith("_error"));
      this.open(key, type, str(block.name) || type);
      this.end(key, failed ? "error" : "ok");
      return;
    }
    this.open(key, type, str(block.name));
    if (cls === "visible") this.text(key, str(block.text) || "");
  }
}

class ResponsesFilter extends Filter {
  constructor(format) {
    super(format);
    this.messages = new Set();
  }

  event(d) {
    const kind = d.type;
    const oi = int(d.output_index);
    const ci = int(d.content_index);
    if (kind === "response.output_item.added") {
      const item = d.item;
      if (oi === null || !item || typeof item.type !== "string") return;
      if (item.type === "message") this.messages.add(oi);
      else this.open(String(oi), item.type, str(item.name) || item.type);
    } else if (kind === "response.output_item.done") {
      const item = d.item;
      if (oi === null || !item) return;
      if (item.type === "message") {
        for (const key of [...this.blocks.keys()]) if (key.startsWith(`${oi}.`)) this.end(key);
        return;
      }
      this.end(String(oi), ["failed", "incomplete"].includes(item.status) ? "error" : "ok");
    } else if (kind === "response.content_part.added") {
      if (oi !== null && ci !== null && d.part && this.messages.has(oi) && str(d.part.type)) {
        this.open(`${oi}.${ci}`, d.part.type);
      }
    } else if (kind === "response.output_text.delta" || kind === "response.refusal.delta") {
      if (oi !== null && ci !== null) this.text(`${oi}.${ci}`, str(d.delta) || "");
    } else if (kind === "response.reasoning_summary_text.delta" || kind === "response.reasoning_text.delta") {
      if (oi !== null) this.count(String(oi), str(d.delta) || "");
    } else if (
      kind === "response.output_text.done" || kind === "response.refusal.done" || kind === "response.content_part.done"
    ) {
      if (oi !== null && ci !== null) this.end(`${oi}.${ci}`);
    } else if (kind === "response.completed" || kind === "response.incomplete") {
      const r = d.response || {};
      const reason = (r.incomplete_details && str(r.incomplete_details.reason)) || str(r.status);
      this.finish(reason || "completed");
    } else if (kind === "response.failed") {
      const e = d.response && d.response.error;
      this.error((e && str(e.code)) || "response.failed");
    } else if (kind === "error") {
      this.error(str(d.code) || "error");
    }
  }
}

class ChatFilter extends Filter {
  static STRINGS = ["content", "refusal", "reasoning_content", "reasoning"];
  static REASONING = ["reasoning_content", "reasoning"];

  event(d) {
    if (d.error !== undefined && d.error !== null) {
      const e = d.error;
      this.error((e && (str(e.type) || str(e.code))) || "error");
      return;
    }
    const choices = Array.isArray(d.choices) ? d.choices : [];
    choices.forEach((choice, k) => {
      if (!choice || typeof choice !== "object") return;
      const index = int(choice.index);
      if ((index === null ? k : index) !== 0) return;
      if (choice.delta && typeof choice.delta === "object") this.delta(choice.delta);
      if (str(choice.finish_reason)) this.finish(choice.finish_reason);
    });
  }

  delta(delta) {
    for (const [key, value] of Object.entries(delta)) {
      if (ChatFilter.STRINGS.includes(key) && typeof value === "string") {
        const cls = classify(this.format, key);
        if (cls !== "never") this.stopThinking();
        this.open(key, key);
        if (cls === "visible") this.text(key, value);
        else this.count(key, value);
      } else if (key === "tool_calls" && Array.isArray(value)) {
        this.stopThinking();
        value.forEach((call, position) => {
          if (!call || typeof call !== "object") return;
          const index = int(call.index);
          const ckey = `tool${index === null ? position : index}`;
          const name = call.function ? str(call.function.name) : null;
          if (!this.blocks.has(ckey)) this.open(ckey, "tool_calls", name);
        });
      }
    }
  }

  stopThinking() {
    for (const key of ChatFilter.REASONING) this.end(key);
  }
}

class AiSdkFilter extends Filter {
  static OPENS = { "text-start": "text", "reasoning-start": "reasoning" };
  static DELTAS = { "text-delta": "text", "reasoning-delta": "reasoning" };
  static ENDS = { "text-end": "text", "reasoning-end": "reasoning" };
  static RESULTS = { "tool-output-available": "ok", "tool-output-error": "error", "tool-output-denied": "denied" };

  constructor(format) {
    super(format);
    this.ids = new Map();
  }

  event(d) {
    const kind = d.type;
    const pid = str(d.id);
    const cid = str(d.toolCallId);
    if (AiSdkFilter.OPENS[kind] && pid !== null) {
      const key = this.key();
      this.ids.set(`${AiSdkFilter.OPENS[kind]}:${pid}`, key);
      this.open(key, AiSdkFilter.OPENS[kind]);
    } else if (AiSdkFilter.DELTAS[kind] && pid !== null) {
      const key = this.ids.get(`${AiSdkFilter.DELTAS[kind]}:${pid}`);
      if (key === undefined) return;
      const piece = str(d.delta) || "";
      if (AiSdkFilter.DELTAS[kind] === "text") this.text(key, piece);
      else this.count(key, piece);
    } else if (AiSdkFilter.ENDS[kind] && pid !== null) {
      const key = this.ids.get(`${AiSdkFilter.ENDS[kind]}:${pid}`);
      if (key !== undefined) this.end(key);
    } else if ((kind === "tool-input-start" || kind === "tool-input-available") && cid !== null) {
      if (!this.ids.has(`tool:${cid}`)) {
        const name = str(d.toolName);
        const key = this.key();
        this.ids.set(`tool:${cid}`, key);
        this.open(key, d.dynamic ? "dynamic-tool" : `tool-${name}`, name);
      }
    } else if (AiSdkFilter.RESULTS[kind] && cid !== null) {
      const key = this.ids.get(`tool:${cid}`);
      if (key !== undefined) this.result(key, AiSdkFilter.RESULTS[kind]);
    } else if (kind === "finish") {
      this.finish(str(d.finishReason) || "stop");
    } else if (kind === "error") {
      this.error("error");
    } else if (kind === "abort") {
      this.error("abort");
    }
  }
}

const FILTERS = {
  "anthropic.messages": AnthropicFilter,
  "openai.responses": ResponsesFilter,
  "openai.chat": ChatFilter,
  "ai-sdk.ui": AiSdkFilter,
};

export const FORMATS = Object.keys(FILTERS);

export function createFilter(format) {
  const F = FILTERS[format];
  if (!F) throw new Error(`unknown format ${format}; known: ${FORMATS.join(", ")}`);
  return new F(format);
}
