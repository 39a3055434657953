// The on-disk spool: exchanges waiting for a console that is unreachable, oldest first.
//
// One file per exchange, named by a sequence number (so a directory listing is the order),
// written to a temporary name and renamed (a crash leaves no half file). A file holds one JSON
// header line ({key, conversation, attempts}) and then the exchange's body bytes, exactly as
// they will be posted. Bounded in files and bytes: making room drops the oldest exchanges, each
// one counted and logged.
//
// Several processes may spool under one directory (the workers of one server): each takes a
// `slot-N` sub-directory of its own. Node has no flock, so a slot is owned through a `.owner`
// file (pid, refreshed every HEARTBEAT_MS) created exclusively; a slot whose owner is gone (no
// such process, a heartbeat older than STALE_MS, or this pid in an earlier life, as in a
// restarted container) is taken over, and the new owner delivers what the old one left. A race
// between two processes taking over one slot can at worst post an exchange twice, which the
// console ignores (the same Idempotency-Key).

import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";

export const SUFFIX = ".exchange";
const MAX_SLOTS = 64;
const HEARTBEAT_MS = 30_000;
const STALE_MS = 5 * 60_000;
const INSTANCE = `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
const ours = new Set(); // slot directories this process owns

export class Entry {
  constructor({ key, conversation, body, attempts = 0, path = null }) {
    this.key = key;
    this.conversation = conversation;
    this.body = body;
    this.attempts = attempts;
    this.path = path;
  }

  bytes() {
    const header = JSON.stringify({
      key: this.key,
      conversation: this.conversation,
      attempts: this.attempts,
    });
    return Buffer.concat([Buffer.from(`${header}\n`, "utf8"), this.body]);
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM"; // it exists, under another user
  }
}

function ownerGone(file) {
  let owner;
  let mtime;
  try {
    owner = JSON.parse(fs.readFileSync(file, "utf8"));
    mtime = fs.statSync(file).mtimeMs;
  } catch (error) {
    if (error.code === "ENOENT") return true;
    return Date.now() - (fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0) > STALE_MS;
  }
  if (owner.instance === INSTANCE) return false;
  if (owner.pid === process.pid) return true; // this pid in an earlier process (a container)
  return !alive(owner.pid) || Date.now() - mtime > STALE_MS;
}

export class Spool {
  /**
   * @param {string} base the spool directory (shared by the processes of one console)
   * @param {{maxFiles: number, maxBytes: number, dropped: (entry: Entry, why: string) => void,
   *   log: object}} options
   */
  constructor(base, { maxFiles, maxBytes, dropped, log }) {
    this.base = base;
    this.maxFiles = maxFiles;
    this.maxBytes = maxBytes;
    this.dropped = dropped;
    this.log = log;
    this.dir = this.#takeSlot();
    this.files = []; // [path, size], oldest first
    this.bytes = 0;
    const names = fs.readdirSync(this.dir).sort();
    for (const name of names) {
      const file = path.join(this.dir, name);
      if (name.endsWith(".tmp")) fs.rmSync(file, { force: true });
      else if (name.endsWith(SUFFIX)) {
        const size = fs.statSync(file).size;
        this.files.push([file, size]);
        this.bytes += size;
      }
    }
    const last = this.files.at(-1);
    this.next = last ? Number(path.basename(last[0]).split("-", 1)[0]) + 1 : 0;
  }

  #takeSlot() {
    // The files hold conversations: readable by this user only.
    fs.mkdirSync(this.base, { recursive: true, mode: 0o700 });
    for (let n = 0; n < MAX_SLOTS; n++) {
      const slot = path.join(this.base, `slot-${n}`);
      if (ours.has(slot)) continue;
      fs.mkdirSync(slot, { recursive: true, mode: 0o700 });
      const owner = path.join(slot, ".owner");
      const mine = JSON.stringify({ pid: process.pid, instance: INSTANCE });
      try {
        fs.writeFileSync(owner, mine, { flag: "wx" });
      } catch (error) {
        if (error.code !== "EEXIST" || !ownerGone(owner)) continue;
        fs.rmSync(owner, { force: true });
        try {
          fs.writeFileSync(owner, mine, { flag: "wx" });
        } catch {
          continue; // another process took it first
        }
      }
      ours.add(slot);
      this.owner = owner;
      this.heartbeat = setInterval(() => {
        const now = new Date();
        fs.utimes(owner, now, now, () => {});
      }, HEARTBEAT_MS);
      this.heartbeat.unref();
      return slot;
    }
    throw new Error(`all ${MAX_SLOTS} spool slots under ${this.base} are taken`);
  }

  get length() {
    return this.files.length;
  }

  #room(size, entry) {
    if (size > this.maxBytes) {
      this.dropped(entry, `it is larger than the spool (${this.maxBytes} bytes)`);
      return false;
    }
    while (
      this.files.length &&
      (this.files.length + 1 > this.maxFiles || this.bytes + size > this.maxBytes)
    ) {
      const [oldest, size] = this.files.shift();
      this.bytes -= size;
      const key = path.basename(oldest, SUFFIX).split("-").slice(1).join("-");
      fs.rmSync(oldest, { force: true });
      this.dropped(
        new Entry({ key, conversation: "", body: Buffer.alloc(0) }),
        `the spool is full (${this.maxFiles} files, ${this.maxBytes} bytes): the oldest ` +
          "exchange makes room",
      );
    }
    return true;
  }

  #name(entry) {
    const file = path.join(this.dir, `${String(this.next).padStart(20, "0")}-${entry.key}${SUFFIX}`);
    this.next += 1;
    return file;
  }

  // Writes one at a time, in the order asked: the list's order is the files' names' order.
  #writes = Promise.resolve();

  #serial(work) {
    const run = this.#writes.then(work);
    this.#writes = run.catch(() => {});
    return run;
  }

  /** Write `entry` at the tail, dropping the oldest entries to stay within bounds. */
  append(entry) {
    this.#waiting.add(entry);
    return this.#serial(async () => {
      if (!this.#waiting.delete(entry)) return; // written by settleSync() meanwhile
      const data = entry.bytes();
      if (!this.#room(data.length, entry)) return;
      const file = this.#name(entry);
      await fsp.writeFile(`${file}.tmp`, data, { mode: 0o600 });
      await fsp.rename(`${file}.tmp`, file);
      entry.path = file;
      this.files.push([file, data.length]);
      this.bytes += data.length;
    });
  }

  // Entries handed to append() whose write has not started: at the process's exit nothing
  // async runs any more, so settleSync() writes them in order.
  #waiting = new Set();

  /** Write, synchronously, what append() was given and has not begun to write. */
  settleSync() {
    const waiting = [...this.#waiting];
    this.#waiting.clear();
    for (const entry of waiting) this.appendSync(entry);
    return waiting;
  }

  /** The same, synchronously: for the process's 'exit' event, where nothing async runs. */
  appendSync(entry) {
    const data = entry.bytes();
    if (!this.#room(data.length, entry)) return;
    const file = this.#name(entry);
    fs.writeFileSync(`${file}.tmp`, data, { mode: 0o600 });
    fs.renameSync(`${file}.tmp`, file);
    entry.path = file;
    this.files.push([file, data.length]);
    this.bytes += data.length;
  }

  /** The entry at `index` (0: the oldest), null past the end. An unreadable file is dropped. */
  async at(index = 0) {
    while (index < this.files.length) {
      const [file] = this.files[index];
      try {
        const data = await fsp.readFile(file);
        const cut = data.indexOf(10);
        const header = JSON.parse(data.subarray(0, cut).toString("utf8"));
        if (cut < 0 || typeof header.key !== "string") throw new Error("no header");
        return new Entry({
          key: header.key,
          conversation: String(header.conversation ?? ""),
          body: data.subarray(cut + 1),
          attempts: Number(header.attempts) || 0,
          path: file,
        });
      } catch (error) {
        this.#forget(file);
        fs.rmSync(file, { force: true });
        this.log.error(`console-client: dropped an unreadable spool file ${file}`, error);
        this.dropped(new Entry({ key: path.basename(file), conversation: "", body: "" }), "unreadable");
      }
    }
    return null;
  }

  /** Rewrite a spooled entry's header (its attempts), in place of its file. */
  update(entry) {
    return this.#serial(async () => {
      if (entry.path === null || !this.files.some(([p]) => p === entry.path)) return;
      await fsp.writeFile(`${entry.path}.tmp`, entry.bytes(), { mode: 0o600 });
      await fsp.rename(`${entry.path}.tmp`, entry.path);
    });
  }

  remove(entry) {
    return this.#serial(async () => {
      if (entry.path === null) return;
      this.#forget(entry.path);
      await fsp.rm(entry.path, { force: true });
      entry.path = null;
    });
  }

  #forget(file) {
    const i = this.files.findIndex(([p]) => p === file);
    if (i >= 0) {
      this.bytes -= this.files[i][1];
      this.files.splice(i, 1);
    }
  }

  close() {
    clearInterval(this.heartbeat);
    if (this.owner) fs.rmSync(this.owner, { force: true });
    ours.delete(this.dir);
  }
}
