// The conversation page's in-flight exchange: the console's live stream (GET
// /conversations/<pk>/live, events the server's filter already made visible and redacted) shown
// as it comes: "Thinking… 14 s · ~1,200 tokens" while the model deliberates, then the answer's
// text, tool calls as they start and finish. When the exchange is stored, the page's timeline is
// fetched again so the answer shows as every stored turn does (Markdown rendered).
//
// The answer in flight is rendered as Markdown by the server's own sanitiser (POST
// /live/markdown, console/markdown.py: the same as the page's), at most a few times a second;
// until a rendering arrives the text is shown as text, never as HTML. A tool's result names the
// call it answers (the oldest call still running), replacing "running…". The header's counts
// follow: a model call when a new exchange starts, a tool call when one starts.
import { thinkingLabel } from "./stream-filter.js";

const section = document.getElementById("live");
// A tool result's status (the filter's tool event), in the page's words.
const WORDS = { ok: "returned a result", error: "failed", denied: "denied" };
if (section && window.EventSource) start(section);

function start(section) {
  const thinking = section.querySelector(".live-thinking");
  const tools = section.querySelector(".live-tools");
  const textBox = section.querySelector(".live-text");
  const meta = section.querySelector(".live-meta");
  let blocks = new Map(); // block key -> {el, raw, timer, asked}
  let think = null; // {t0, base, tokens}
  let timer = null;
  let t0 = Date.now();
  let firstText = null;
  let thoughtSeconds = 0;

  function show() {
    section.hidden = false;
  }

  function tick() {
    if (!think) return;
    const seconds = think.base + (Date.now() - think.t0) / 1000;
    thinking.textContent = thinkingLabel(seconds, think.tokens);
  }

  function bump(name) {
    const el = document.querySelector(`#head-counts [data-count="${name}"]`);
    if (!el) return;
    const n = (parseInt(el.dataset.n, 10) || 0) + 1;
    el.dataset.n = String(n);
    el.textContent = `${n} ${n === 1 ? el.dataset.one : el.dataset.many}`;
  }

  // Rendered by the server (the page's sanitiser); a stale answer never overwrites a newer one.
  async function render(block) {
    block.timer = null;
    const raw = block.raw;
    const seq = ++block.asked;
    const body = new URLSearchParams({ text: raw });
    try {
      const response = await fetch(section.dataset.markdownUrl, {
        method: "POST",
        body,
        headers: { "X-CSRFToken": section.dataset.csrf },
        credentials: "same-origin",
      });
      if (!response.ok || seq !== block.asked) return;
      const html = await response.text();
      if (seq === block.asked) {
        block.el.innerHTML = html; // the server's sanitised rendering, as the page shows it
        block.el.classList.add("rendered");
      }
    } catch (err) {
      /* the plain text stays */
    }
  }

  function reset() {
    blocks.forEach((b) => clearTimeout(b.timer));
    blocks = new Map();
    textBox.replaceChildren();
    tools.replaceChildren();
    thinking.hidden = true;
    think = null;
  }

  let exchange = null;

  function onEvent(e) {
    show();
    if (e.exchange !== exchange) {
      // another provider call of the conversation: the view shows one exchange in flight
      bump("exchanges"); // a model call not stored yet: the header counts it now
      exchange = e.exchange;
      reset();
      meta.textContent = "";
      t0 = Date.now();
      firstText = null;
      thoughtSeconds = 0;
    }
    switch (e.type) {
      case "thinking":
        if (e.state === "stopped") {
          think = null;
          clearInterval(timer);
          thoughtSeconds += e.seconds;
          thinking.textContent = `Thought for ${Math.round(e.seconds)} s` + (e.tokens ? ` · ~${e.tokens.toLocaleString("en-US")} tokens` : "");
        } else {
          think = { t0: Date.now(), base: e.seconds || 0, tokens: e.tokens || 0 };
          thinking.hidden = false;
          tick();
          clearInterval(timer);
          timer = setInterval(tick, 1000);
        }
        break;
      case "text": {
        if (firstText === null) firstText = (Date.now() - t0) / 1000;
        let block = blocks.get(e.block);
        if (!block) {
          const div = document.createElement("div");
          div.className = "bubble answer live-block";
          textBox.append(div);
          block = { el: div, raw: "", timer: null, asked: 0 };
          blocks.set(e.block, block);
        }
        block.raw += e.text;
        block.el.dataset.raw = block.raw; // the text as it came (tests compare it)
        if (!block.el.classList.contains("rendered")) block.el.textContent = block.raw;
        if (!block.timer) block.timer = setTimeout(() => render(block), 150);
        break;
      }
      case "tool": {
        let li = tools.querySelector(`[data-block="${CSS.escape(e.block)}"]`);
        if (e.state === "started" && !li && e.result) {
          // A result's own block (the format profile's result_types, marked by the server's
          // filter): it answers the oldest call still running; its status comes with its end.
          const open = tools.querySelector('li[data-state="running"]:not([data-answered])');
          if (open) {
            open.dataset.answered = "1";
            open.dataset.resultBlock = e.block;
          }
          break;
        }
        if (!li && e.state !== "started") {
          li = tools.querySelector(`[data-result-block="${CSS.escape(e.block)}"]`);
        }
        if (!li) {
          li = document.createElement("li");
          li.dataset.block = e.block;
          li.className = "call tone-pending";
          li.innerHTML = '<span class="tool"></span> <span class="status status-pending"></span>';
          tools.append(li);
        }
        const status = li.querySelector(".status");
        if (e.state === "started") {
          li.dataset.state = "running";
          li.querySelector(".tool").textContent = e.name || "tool";
          status.textContent = "running…";
          bump("tools");
        } else {
          li.dataset.state = e.status === "ok" ? "ok" : "error";
          li.className = `call tone-${li.dataset.state}`;
          status.className = `status status-${li.dataset.state}`;
          status.textContent = WORDS[e.status] || e.status;
        }
        break;
      }
      case "reset":
        reset();
        break;
      case "finished":
      case "error":
        think = null;
        clearInterval(timer);
        meta.textContent =
          (e.type === "error" ? `Stopped (${e.code})` : `Finished (${e.reason})`) +
          (firstText !== null ? ` · first text after ${firstText.toFixed(1)} s` : "") +
          (thoughtSeconds ? ` · thought ${thoughtSeconds.toFixed(1)} s` : "");
        break;
      case "idle":
        // No chunk for the idle time and no stored exchange: the chat backend stopped sending.
        think = null;
        clearInterval(timer);
        thinking.hidden = true;
        meta.textContent =
          `Stopped streaming: nothing arrived for ${e.seconds} s and the exchange was not stored` +
          (firstText !== null ? ` · first text after ${firstText.toFixed(1)} s` : "");
        break;
      case "closed":
        refreshTimeline();
        break;
    }
  }

  async function refreshTimeline() {
    const response = await fetch(window.location.href, { headers: { Accept: "text/html" } });
    if (!response.ok) return;
    const doc = new DOMParser().parseFromString(await response.text(), "text/html");
    const fresh = doc.querySelector("ol.timeline");
    const here = document.querySelector("ol.timeline");
    for (const selector of ["#head-counts", ".workspace-top"]) {
      const now = doc.querySelector(selector);
      const old = document.querySelector(selector);
      if (now && old) old.replaceWith(now);
    }
    if (fresh && here) {
      here.replaceWith(fresh);
      reset();
      meta.textContent = "";
      section.hidden = true;
    }
  }

  const source = new EventSource(section.dataset.liveUrl);
  source.addEventListener("live", (m) => onEvent(JSON.parse(m.data)));
}
