// Delivery: retries with one Idempotency-Key, the spool while the console is down, order, the
// bounds, and a console that keeps failing one exchange.

import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, test } from "node:test";

import { consoleFetch, consoleFor, counters, flush, shutdown, withConversation } from "../src/index.js";
import { anthropicMessage, fakeConsole, fakeProvider, until } from "./fakes.js";

const quiet = { error() {}, warn() {}, info() {}, debug() {} };
const FAST = { backoff: 0.01, backoffMax: 0.05, logger: quiet };
const cleanup = [];
afterEach(async () => {
  await shutdown(1);
  for (const close of cleanup.splice(0)) await close();
});

async function providerAnswering() {
  const provider = await fakeProvider((req, body) => ({ body: anthropicMessage(`re ${JSON.parse(body).n}`) }));
  cleanup.push(provider.close);
  return provider;
}

async function calls(fetch, provider, conversation, ns) {
  for (const n of ns) {
    await withConversation({ id: conversation, customer: "u-1" }, async () => {
      const res = await fetch(`${provider.url}/v1/messages`, { method: "POST", body: JSON.stringify({ n }) });
      await res.json();
    });
  }
}

const spooled = (dir) =>
  readdirSync(dir, { recursive: true }).filter((name) => String(name).endsWith(".exchange"));

const freePort = async () => {
  const c = await fakeConsole();
  await c.close();
  return c.port;
};

test("a 503 is retried with the same Idempotency-Key; a 400 is rejected once", async () => {
  const provider = await providerAnswering();
  let n = 0;
  const console = await fakeConsole((r) => {
    n += 1;
    if (JSON.parse(r.json.request).n === 1) return { status: n <= 2 ? 503 : 201 };
    return { status: 400, body: '{"error":"invalid","detail":"no","field":"request","at":"$.messages"}' };
  });
  cleanup.push(console.close);
  const fetch = consoleFetch({ url: console.url, token: "t", spoolDir: mkdtempSync(path.join(tmpdir(), "ccjs-")), ...FAST });
  await calls(fetch, provider, "c-1", [1, 2]);
  assert.ok(await flush(5));
  const keys = console.exchanges().map((e) => e.headers["idempotency-key"]);
  assert.equal(keys.length, 4);
  assert.equal(new Set(keys.slice(0, 3)).size, 1); // three attempts of the first
  assert.notEqual(keys[3], keys[0]);
  const c = counters();
  assert.deepEqual([c.sent, c.retried, c.rejected, c.spooled, c.dropped], [1, 2, 1, 0, 0]);
});

for (const worker of [true, false]) {
  test(`the console down: calls still succeed, exchanges go to the spool, and drain in order once it is back (worker: ${worker})`, async () => {
    const provider = await providerAnswering();
    const port = await freePort();
    const dir = mkdtempSync(path.join(tmpdir(), "ccjs-"));
    const fetch = consoleFetch({ url: `http://127.0.0.1:${port}`, token: "t", spoolDir: dir, retriesBeforeSpool: 1, worker, ...FAST });
    await calls(fetch, provider, "c-2", [1, 2, 3, 4, 5]);
    assert.equal(await flush(0.5), false);
    assert.equal(spooled(dir).length, 5);
    for (const name of spooled(dir)) assert.equal(statSync(path.join(dir, name)).mode & 0o777, 0o600);
    assert.equal(counters().spooled, 5);
    const console = await fakeConsole(undefined, port);
    cleanup.push(console.close);
    assert.ok(await flush(10));
    assert.deepEqual(console.exchanges().map((e) => JSON.parse(e.json.request).n), [1, 2, 3, 4, 5]);
    assert.equal(spooled(dir).length, 0);
    const c = counters();
    assert.deepEqual([c.captured, c.sent, c.dropped], [5, 5, 0]);
  });
}

test("what one process spooled, the next one on the same directory delivers", async () => {
  const provider = await providerAnswering();
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), "ccjs-"));
  const options = { url: `http://127.0.0.1:${port}`, token: "t", spoolDir: dir, retriesBeforeSpool: 0, ...FAST };
  await calls(consoleFetch(options), provider, "c-3", [1, 2]);
  await flush(0.3);
  assert.equal(spooled(dir).length, 2);
  await shutdown(0); // this "process" is gone; its files stay
  const console = await fakeConsole(undefined, port);
  cleanup.push(console.close);
  const next = consoleFor(options); // a new Console: takes the free slot, finds the files
  assert.ok(await next.flush(10));
  assert.deepEqual(console.exchanges().map((e) => JSON.parse(e.json.request).n), [1, 2]);
});

test("an exchange the console keeps failing with a 500 is dropped only once it takes the one behind", async () => {
  const provider = await providerAnswering();
  let broken = true; // every post fails (the console's database is down)
  const console = await fakeConsole((r) =>
    broken || JSON.parse(r.json.request).n === 1 ? { status: 500, body: "boom" } : { status: 201 },
  );
  cleanup.push(console.close);
  const dir = mkdtempSync(path.join(tmpdir(), "ccjs-"));
  const target = consoleFor({ url: console.url, token: "t", spoolDir: dir, maxAttempts: 3, retriesBeforeSpool: 0, ...FAST });
  await calls(target.fetch(), provider, "c-4", [1, 2, 3]);
  // Many 500s (the head has had maxAttempts several times over), nothing used up: the console
  // fails them all.
  await until(() => console.exchanges().length >= 12, 60_000);
  assert.equal(target.counters().dropped, 0);
  assert.equal(target.pending(), 3);
  broken = false; // the console is back, but exchange 1 is one it cannot take
  assert.ok(await target.flush(10));
  const sent = console.exchanges().filter((e) => e.json && JSON.parse(e.json.request).n !== 1);
  assert.deepEqual([...new Set(sent.map((e) => JSON.parse(e.json.request).n))], [2, 3]);
  const c = target.counters();
  assert.deepEqual([c.dropped, c.sent], [1, 2]);
});

test("the spool is bounded: the oldest exchange makes room", async () => {
  const provider = await providerAnswering();
  const dir = mkdtempSync(path.join(tmpdir(), "ccjs-"));
  const fetch = consoleFetch({ url: `http://127.0.0.1:${await freePort()}`, token: "t", spoolDir: dir, spoolMaxFiles: 2, retriesBeforeSpool: 0, ...FAST });
  await calls(fetch, provider, "c-5", [1, 2, 3, 4]);
  await flush(0.5);
  const left = spooled(dir).sort();
  assert.equal(left.length, 2);
  assert.equal(counters().dropped, 2);
});

test("no spool (a directory that cannot be made) and a full queue: dropped and counted, never thrown", async () => {
  const provider = await providerAnswering();
  const file = path.join(mkdtempSync(path.join(tmpdir(), "ccjs-")), "a-file");
  writeFileSync(file, "not a directory");
  const fetch = consoleFetch({ url: `http://127.0.0.1:${await freePort()}`, token: "t", spoolDir: path.join(file, "spool"), queueSize: 2, retriesBeforeSpool: 0, ...FAST });
  await calls(fetch, provider, "c-6", [1, 2, 3, 4, 5]);
  await flush(0.5);
  const c = counters();
  assert.equal(c.sent, 0);
  assert.ok(c.dropped >= 3, JSON.stringify(c));
});

test("a console that never answers: flush gives up on time, and what is queued goes to the spool", async () => {
  const provider = await providerAnswering();
  const console = await fakeConsole(() => new Promise(() => {}));
  cleanup.push(console.close);
  const dir = mkdtempSync(path.join(tmpdir(), "ccjs-"));
  const fetch = consoleFetch({ url: console.url, token: "t", spoolDir: dir, timeout: 0.3, ...FAST });
  // The calls complete: had they waited for the console, they never would.
  await calls(fetch, provider, "c-7", [1, 2, 3]);
  assert.equal(await flush(0.2), false);
  assert.ok(spooled(dir).length >= 2);
});
