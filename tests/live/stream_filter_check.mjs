// Runs static/console/stream-filter.js on every recorded stream (a JSON file from
// tests/live/test_stream_filter_js.py), in random cuts, and prints what it found as JSON:
// for each stream and seed, the text per block and the serialised events (checked in Python).
import { readFileSync } from "node:fs";
import { createFilter, CLASSES, FORMATS, INLINE, thinkingLabel } from "../../static/console/stream-filter.js";

const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));

function rng(seed) {
  let s = seed + 1;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

function cuts(text, rand) {
  const out = [];
  let i = 0;
  while (i < text.length) {
    const choices = [1, 2, 3, 1 + Math.floor(rand() * 40), 1 + Math.floor(rand() * 400)];
    const n = choices[Math.floor(rand() * choices.length)];
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}

const results = [];
for (const c of cases) {
  for (let seed = 0; seed < 6; seed++) {
    const f = createFilter(c.format);
    const events = [];
    const pieces = seed === 0 ? [c.stream] : cuts(c.stream, rng(seed));
    for (const p of pieces) events.push(...f.feed(p));
    events.push(...f.close());
    let blocks = new Map();
    for (const e of events) {
      if (e.type === "reset") blocks = new Map();
      else if (e.type === "text") blocks.set(e.block, (blocks.get(e.block) || "") + e.text);
    }
    results.push({ name: c.name, seed, blocks: [...blocks.values()], events: JSON.stringify(events) });
  }
}
process.stdout.write(
  JSON.stringify({ results, classes: CLASSES, formats: FORMATS, inline: INLINE, label: thinkingLabel(14.2, 1200) }),
);
