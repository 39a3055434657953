import assert from "node:assert/strict";
import { afterEach, test } from "node:test";

import { ConsoleError, ConversationNotFound, history, shutdown } from "../src/index.js";
import { splitEnvelope } from "../src/history.js";
import { fakeConsole } from "./fakes.js";

const cleanup = [];
afterEach(async () => {
  await shutdown(1);
  for (const close of cleanup.splice(0)) await close();
});

const ELEMENTS = [
  '{"role":"user","content":"Où est \\"mon\\" colis ? [ ] { } \\\\"}',
  '{\n  "role": "assistant",\n  "content": [ {"type":"thinking","thinking":"…","signature":"c2ln"}, {"type":"text","text":"😀 ✓"} ]\n}',
  '{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"]}"}],"n":-1.5e3,"ok":true,"x":null}',
];

test("each element's bytes, exactly, whatever they hold", () => {
  const raw = Buffer.from(`{"messages":[${ELEMENTS.join(",")}]}`, "utf8");
  const { messages, leftOut } = splitEnvelope(raw);
  assert.deepEqual(messages.map((m) => Buffer.from(m).toString("utf8")), ELEMENTS);
  assert.deepEqual(leftOut, {});
  const spaced = Buffer.from(` { "messages" : [ ${ELEMENTS[0]} ] , "left_out" : {"elements":2,"bytes":310} } `);
  const again = splitEnvelope(spaced);
  assert.equal(Buffer.from(again.messages[0]).toString(), ELEMENTS[0]);
  assert.deepEqual(again.leftOut, { elements: 2, bytes: 310 });
  assert.deepEqual(splitEnvelope(Buffer.from('{"messages":[]}')).messages, []);
  for (const bad of ['{"messages":[{"a":1}', '{"messages":{}}', '{"messages":[{"a":1}]} x', '{"messages":[{"a":}]}']) {
    assert.throws(() => splitEnvelope(Buffer.from(bad)), SyntaxError, bad);
  }
});

test("history() reads the replay; a missing conversation and other answers are errors with the console's words", async () => {
  const body = `{"messages":[${ELEMENTS.join(",")}]}`;
  const console = await fakeConsole((r) => {
    if (r.path.includes("/missing/")) return { status: 404, body: '{"error":"not_found","detail":"no such conversation"}' };
    if (r.path.includes("/broken/")) return { status: 200, body: "<html>" };
    assert.equal(r.headers.authorization, "Bearer tok");
    return { status: 200, body: r.path.endsWith("?for=continuation") ? body.slice(0, -1) + ',"left_out":{"elements":1,"bytes":9}}' : body };
  });
  cleanup.push(console.close);
  const target = { url: console.url, token: "tok" };
  const replay = await history("c/1 é", target);
  assert.equal(console.requests[0].path, "/api/v1/conversations/c%2F1%20%C3%A9/messages");
  assert.equal(Buffer.from(replay.raw).toString(), body);
  assert.equal(replay.messages[1].content[1].text, "😀 ✓");
  assert.equal(Buffer.from(replay.rawMessages[1]).toString(), ELEMENTS[1]);
  const cont = await history("c-1", { ...target, forContinuation: true });
  assert.deepEqual([cont.leftOutElements, cont.leftOutBytes], [1, 9]);
  await assert.rejects(history("missing", target), (e) => e instanceof ConversationNotFound && e.status === 404 && e.error === "not_found");
  await assert.rejects(history("broken", target), (e) => e instanceof ConsoleError && /not a replay/.test(e.message));
  await assert.rejects(history("c-1"), TypeError); // no console made yet, none given
});
