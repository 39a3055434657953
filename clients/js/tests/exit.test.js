// A backend that exits without calling flush(): its exchanges are delivered while the event
// loop runs dry (up to exitTimeout), or spooled at exit for the next process; the process is
// never held up longer than that.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";

import { anthropicMessage, fakeConsole, fakeProvider } from "./fakes.js";

const run = promisify(execFile);
const INDEX = new URL("../src/index.js", import.meta.url).href;
let provider;

before(async () => {
  provider = await fakeProvider(() => ({ body: anthropicMessage("ok") }));
});
after(async () => provider.close());

function backend(consoleUrl, spoolDir, worker) {
  const script = `
    import { consoleFetch, withConversation } from ${JSON.stringify(INDEX)};
    const fetch = consoleFetch({ url: ${JSON.stringify(consoleUrl)}, token: "t",
      spoolDir: ${JSON.stringify(spoolDir)}, worker: ${worker}, logger: { error: (...a) => process.stderr.write(a.join(" ") + "\\n"), warn() {}, info() {}, debug() {} } });
    for (const n of [1, 2, 3]) {
      await withConversation({ id: "c-exit", customer: "u" }, async () => {
        const res = await fetch(${JSON.stringify(provider.url)} + "/v1/messages", { method: "POST", body: JSON.stringify({ n }) });
        await res.json();
      });
    }
    console.log("answered");`;
  return run(process.execPath, ["--input-type=module", "-e", script], { timeout: 30_000 });
}

const spooled = (dir) => readdirSync(dir, { recursive: true }).filter((n) => String(n).endsWith(".exchange"));

for (const worker of [true, false]) {
  const where = worker ? "a worker thread" : "the main thread";
  test(`the console up: delivered before the process ends (${where})`, async () => {
    const console = await fakeConsole();
    try {
      const dir = mkdtempSync(path.join(tmpdir(), "ccjs-exit-"));
      const { stdout, stderr } = await backend(console.url, dir, worker);
      assert.equal(stdout.trim(), "answered");
      assert.equal(stderr, ""); // no error: the worker thread started under `node -e` too
      assert.deepEqual(console.exchanges().map((e) => JSON.parse(e.json.request).n), [1, 2, 3]);
      assert.equal(spooled(dir).length, 0);
    } finally {
      await console.close();
    }
  });

  test(`the console down: the process still ends, its exchanges spooled (${where})`, async () => {
    const down = await fakeConsole();
    await down.close(); // its port, with nothing listening
    const dir = mkdtempSync(path.join(tmpdir(), "ccjs-exit-"));
    const { stdout, stderr } = await backend(down.url, dir, worker); // ends (or times out: a failure)
    assert.equal(stdout.trim(), "answered");
    assert.equal(stderr, "");
    assert.equal(spooled(dir).length, 3);
  });
}
