// The worker thread of one console (console.js starts it): a Delivery fed by messages.
//
// Messages in: {t: "exchange", capture}, {t: "chunks", items: [{call, data}...]} (live), {t: "flush", id,
// timeout}, {t: "close", id, timeout}, {t: "spill"} (the process is exiting: what is queued goes
// to the spool now, synchronously, then the flag in shared memory is raised). Out: {t: "log",
// level, message}, {t: "done", id, result}. Counters are in shared memory (SharedCounts).

import { parentPort, workerData } from "node:worker_threads";

import { Capture } from "./capture.js";
import { Delivery, SharedCounts } from "./delivery.js";

const { url, token, options, buffer } = workerData;
const counts = new SharedCounts(buffer);

function text(args) {
  return args
    .map((a) => (a instanceof Error ? (a.stack ?? a.message) : typeof a === "string" ? a : String(a)))
    .join(" ");
}

const log = Object.fromEntries(
  ["error", "warn", "info", "debug"].map((level) => [
    level,
    (...args) => parentPort.postMessage({ t: "log", level, message: text(args) }),
  ]),
);

const delivery = new Delivery(url, token, options, { counts, log });

parentPort.on("message", async (message) => {
  try {
    switch (message.t) {
      case "exchange":
        delivery.submit(Capture.revive(message.capture));
        break;
      case "chunks":
        for (const { call, data } of message.items) delivery.liveChunk(call, data);
        break;
      case "flush":
        parentPort.postMessage({ t: "done", id: message.id, result: await delivery.flush(message.timeout) });
        break;
      case "close":
        parentPort.postMessage({ t: "done", id: message.id, result: await delivery.close(message.timeout) });
        break;
      case "spill":
        delivery.spillSync();
        Atomics.store(counts.array, counts.spilledIndex, 1);
        Atomics.notify(counts.array, counts.spilledIndex);
        break;
      default:
        log.error(`console-client: the worker got an unknown message ${message.t}`);
    }
  } catch (error) {
    log.error("console-client: the worker failed on a message", error);
  }
});
parentPort.postMessage({ t: "ready" });
