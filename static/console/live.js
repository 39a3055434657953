// The conversation page's in-flight exchange: the console's live stream (GET
// /conversations/<pk>/live, events the server's filter already made visible and redacted) shown
// as it comes: "Thinking… 14 s · ~1,200 tokens" while the model deliberates, then the answer's
// text, tool calls as they start and finish. When the exchange is stored, the page's timeline is
// fetched again so the answer shows as every stored turn does (Markdown rendered).
import { thinkingLabel } from "./stream-filter.js";

const section = document.getElementById("live");
if (section && window.EventSource) start(section);

function start(section) {
  const thinking = section.querySelector(".live-thinking");
  const tools = section.querySelector(".live-tools");
  const textBox = section.querySelector(".live-text");
  const meta = section.querySelector(".live-meta");
  let blocks = new Map(); // block key -> text node
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

  function reset() {
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
        let node = blocks.get(e.block);
        if (!node) {
          const p = document.createElement("p");
          p.className = "live-block";
          node = document.createTextNode("");
          p.append(node);
          textBox.append(p);
          blocks.set(e.block, node);
        }
        node.appendData(e.text);
        break;
      }
      case "tool": {
        let li = tools.querySelector(`[data-block="${CSS.escape(e.block)}"]`);
        if (!li) {
          li = document.createElement("li");
          li.dataset.block = e.block;
          tools.append(li);
        }
        if (e.state === "started") li.textContent = `Tool ${e.name} running…`;
        else li.textContent = `${li.textContent.replace(/ running…$/, "")}: ${e.status}`;
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
