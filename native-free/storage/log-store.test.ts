import { spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { createInterface } from "node:readline";
import ts from "typescript";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { LMDB_DATA_FILE } from "../../src/storage/data-dir-kind.js";
import { describeKvStoreContract } from "../../test/support/kv-contract.js";
import type { DurabilityMode } from "../../src/storage/kv.js";
import { LOCK_FILE } from "./dir-lock.js";
import { LogStore, type LogStoreTuning } from "./log-store.js";
import { listStoreFiles, logFileName, snapshotFileName } from "./store-files.js";

describeKvStoreContract("log store, commit", (dir) => new LogStore({ path: dir, durability: "commit" }));
describeKvStoreContract("log store, flush", (dir) => new LogStore({ path: dir, durability: "flush" }));
// Snapshots every few kilobytes, so the contract also runs across log rotations.
describeKvStoreContract("log store, tiny snapshot threshold", (dir) =>
  new LogStore({ path: dir, durability: "commit" }, { snapshotThresholdBytes: 2048 }),
);

const PROJECT_ROOT = resolve(import.meta.dirname, "../..");

describe("LogStore", () => {
  let dir: string;
  let store: LogStore | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "switchyard-log-"));
  });

  afterEach(async () => {
    await store?.close().catch(() => undefined);
    store = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  function openStore(tuning?: LogStoreTuning, durability: DurabilityMode = "commit"): LogStore {
    store = new LogStore({ path: dir, durability }, tuning);
    return store;
  }

  /** One write per record, so each is its own frame in the log. */
  async function writeRecords(target: LogStore, from: number, to: number): Promise<void> {
    const events = target.table("events");
    for (let i = from; i < to; i++) await target.write(() => events.put(recordKey(i), { i }));
  }

  function recordKey(i: number): string {
    return `k${i.toString().padStart(5, "0")}`;
  }

  function presentRecords(target: LogStore): number[] {
    return [...target.table<{ i: number }>("events").range({})].map((entry) => entry.value.i);
  }

  function activeLogPath(): string {
    const { logs } = listStoreFiles(dir);
    return join(dir, logFileName(logs[logs.length - 1]!));
  }

  describe("recovery", () => {
    it("cuts garbage appended after the last record and keeps every record before it", async () => {
      await writeRecords(openStore(), 0, 50);
      await store!.close();
      appendFileSync(activeLogPath(), Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]));
      const reopened = openStore();
      expect(reopened.recovery.truncatedBytes).toBe(13);
      expect(presentRecords(reopened)).toEqual(Array.from({ length: 50 }, (_, i) => i));
      // The log goes on from the cut: new records land after the old ones and survive another reopen.
      await writeRecords(reopened, 50, 60);
      await reopened.close();
      const again = openStore();
      expect(again.recovery.truncatedBytes).toBe(0);
      expect(presentRecords(again)).toHaveLength(60);
    });

    it("drops a record cut mid-frame, and only that one", async () => {
      await writeRecords(openStore(), 0, 20);
      await store!.close();
      const path = activeLogPath();
      truncateSync(path, statSync(path).size - 3);
      const reopened = openStore();
      expect(reopened.recovery.truncatedBytes).toBeGreaterThan(0);
      expect(presentRecords(reopened)).toEqual(Array.from({ length: 19 }, (_, i) => i));
    });

    it("drops a last record whose bytes fail the CRC", async () => {
      await writeRecords(openStore(), 0, 20);
      await store!.close();
      const path = activeLogPath();
      const bytes = readFileSync(path);
      bytes[bytes.length - 2]! ^= 0xff;
      writeFileSync(path, bytes);
      expect(presentRecords(openStore())).toEqual(Array.from({ length: 19 }, (_, i) => i));
    });

    it("opens a log whose first record is torn as empty", async () => {
      await openStore().close();
      const headerBytes = statSync(activeLogPath()).size;
      await writeRecords(openStore(), 0, 5);
      await store!.close();
      truncateSync(activeLogPath(), headerBytes + 3);
      const reopened = openStore();
      expect(presentRecords(reopened)).toEqual([]);
      expect(statSync(activeLogPath()).size).toBe(headerBytes);
    });
  });

  describe("snapshots", () => {
    it("snapshots past the threshold, prunes old logs, and loads snapshot plus log on open", async () => {
      const tuned = openStore({ snapshotThresholdBytes: 4096 });
      await writeRecords(tuned, 0, 300);
      await tuned.write(() => {
        tuned.table("events").remove(recordKey(7));
        tuned.table("users").put("u", { name: "after" });
      });
      await tuned.close();
      const files = listStoreFiles(dir);
      expect(files.snapshots.length).toBe(1);
      // Only the logs from the snapshot's generation on remain.
      expect(files.logs[0]).toBe(files.snapshots[0]);
      const reopened = openStore({ snapshotThresholdBytes: 4096 });
      expect(reopened.recovery.snapshotGeneration).toBe(files.snapshots[0]);
      expect(presentRecords(reopened)).toEqual(Array.from({ length: 300 }, (_, i) => i).filter((i) => i !== 7));
      expect(reopened.table("users").get("u")).toEqual({ name: "after" });
    });

    it("ignores the temp file of a snapshot interrupted by a crash", async () => {
      await writeRecords(openStore(), 0, 10);
      await store!.close();
      const temp = join(dir, `${snapshotFileName(99)}.tmp`);
      writeFileSync(temp, "half a snapshot");
      expect(presentRecords(openStore())).toHaveLength(10);
      expect(existsSync(temp)).toBe(false);
    });

    it("refuses to open when the newest snapshot is damaged and the logs before it are gone", async () => {
      const tuned = openStore({ snapshotThresholdBytes: 2048 });
      await writeRecords(tuned, 0, 200);
      await tuned.close();
      const { snapshots } = listStoreFiles(dir);
      const path = join(dir, snapshotFileName(snapshots[snapshots.length - 1]!));
      const bytes = readFileSync(path);
      bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
      writeFileSync(path, bytes);
      expect(() => openStore()).toThrow(expect.objectContaining({ code: "LOG_STORE_CORRUPT" }));
      store = undefined;
    });
  });

  describe("data dir", () => {
    it("refuses a directory written by LMDB", () => {
      writeFileSync(join(dir, LMDB_DATA_FILE), "");
      expect(() => openStore()).toThrow(expect.objectContaining({ code: "DATA_DIR_KIND_MISMATCH", message: expect.stringContaining("LMDB") }));
      store = undefined;
    });

    it("refuses a second opener in the same process until the first closes", async () => {
      const first = openStore();
      expect(() => new LogStore({ path: dir, durability: "commit" })).toThrow(expect.objectContaining({ code: "DATA_DIR_LOCKED" }));
      await first.close();
      const second = openStore();
      await second.write(() => second.table("users").put("u", 1));
    });

    it("takes over a lock left by a process that is gone", async () => {
      const gone = spawn(process.execPath, ["-e", ""]);
      const pid = gone.pid!;
      await new Promise((resolveExit) => gone.once("exit", resolveExit));
      writeFileSync(join(dir, LOCK_FILE), `${pid}@${(await import("node:os")).hostname()}\n`);
      const opened = openStore();
      expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(`${process.pid}@${(await import("node:os")).hostname()}\n`);
      await opened.close();
      expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    });

    it("rejects writes after close and changes outside write()", async () => {
      const opened = openStore();
      expect(() => opened.table("users").put("u", 1)).toThrow(/outside write/);
      await opened.close();
      await expect(opened.write(() => undefined)).rejects.toThrow(/closed/);
    });
  });

  describe("in other processes", () => {
    let childDir: string;
    let childScript: string;

    beforeAll(() => {
      ({ childDir, childScript } = buildChild());
    });

    afterAll(async () => {
      await rm(childDir, { recursive: true, force: true });
    });

    it("refuses a second process while the first has the dir open", async () => {
      openStore();
      const { lines, exitCode } = await runChild(childScript, [dir, "commit", "open-once"]);
      expect(await exitCode).toBe(0);
      expect(lines).toEqual(["error DATA_DIR_LOCKED"]);
    });

    it.each(["commit", "flush"] as const)("loses no acknowledged write when SIGKILLed mid-stream (%s)", async (durability) => {
      const child = startChild(childScript, [dir, durability, "stream"]);
      const acknowledged: number[] = [];
      await new Promise<void>((resolveEnough, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${acknowledged.length} acks in 20 s`)), 20_000);
        child.lines.on("line", (line) => {
          if (line === "ready") return;
          acknowledged.push(Number(line));
          if (acknowledged.length === 4000) {
            clearTimeout(timer);
            resolveEnough();
          }
        });
      });
      // Every ack that reaches us counts, also those still in the pipe when the kill lands: the newest ones are
      // the ones a store that answered before writing would lose.
      const stdoutClosed = new Promise((resolveClosed) => child.lines.once("close", resolveClosed));
      child.process.kill("SIGKILL");
      await Promise.all([child.exitCode, stdoutClosed]);
      const reopened = openStore();
      const events = reopened.table<{ i: number; pad: string }>("events");
      const missing = acknowledged.filter((i) => events.get(streamKey(i))?.i !== i);
      expect(missing).toEqual([]);
      expect(events.get(streamKey(acknowledged[0]!))?.pad).toBe("x".repeat(acknowledged[0]! % 200));
      // The child was writing with a small snapshot threshold, so the kill may have hit a rotation or snapshot.
      expect(listStoreFiles(dir).logs.length).toBeGreaterThan(0);
    });
  });
});

function streamKey(i: number): string {
  return i.toString().padStart(8, "0");
}

/**
 * The child runs plain JavaScript: the store's sources, transpiled here with the project's TypeScript into a temp
 * dir inside the project (so `msgpackr` resolves from its node_modules), plus a small driver script.
 */
function buildChild(): { childDir: string; childScript: string } {
  const childDir = join(PROJECT_ROOT, ".vitest-tmp", `log-store-child-${process.pid}-${Date.now()}`);
  const pending = [join(PROJECT_ROOT, "native-free/storage/log-store.ts")];
  const done = new Set<string>();
  while (pending.length > 0) {
    const source = pending.pop()!;
    if (done.has(source)) continue;
    done.add(source);
    const text = readFileSync(source, "utf8");
    for (const match of text.matchAll(/from "(\.{1,2}\/[^"]+)\.js"/g)) pending.push(resolve(dirname(source), `${match[1]}.ts`));
    const output = ts.transpileModule(text, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      fileName: source,
    }).outputText;
    const target = join(childDir, relative(PROJECT_ROOT, source)).replace(/\.ts$/, ".js");
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, output);
  }
  const childScript = join(childDir, "driver.mjs");
  writeFileSync(
    childScript,
    `import { LogStore } from "./native-free/storage/log-store.js";
const [dir, durability, mode] = process.argv.slice(2);
if (mode === "open-once") {
  try {
    const store = new LogStore({ path: dir, durability });
    console.log("opened");
    await store.close();
  } catch (error) {
    console.log("error " + error.code);
  }
} else if (mode === "stream") {
  const store = new LogStore({ path: dir, durability }, { snapshotThresholdBytes: 64 * 1024 });
  const events = store.table("events");
  let next = 0;
  const writer = async () => {
    for (;;) {
      const i = next++;
      await store.write(() => events.put(String(i).padStart(8, "0"), { i, pad: "x".repeat(i % 200) }));
      process.stdout.write(i + "\\n");
    }
  };
  console.log("ready");
  for (let w = 0; w < 8; w++) void writer();
}
`,
  );
  return { childDir, childScript };
}

function startChild(script: string, args: string[]) {
  const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  const exitCode = new Promise<number | null>((resolveExit) => child.once("exit", (code) => resolveExit(code)));
  return { process: child, lines, exitCode };
}

async function runChild(script: string, args: string[]) {
  const child = startChild(script, args);
  const lines: string[] = [];
  child.lines.on("line", (line) => lines.push(line));
  const closed = new Promise((resolveClosed) => child.lines.once("close", resolveClosed));
  await Promise.all([child.exitCode, closed]);
  return { lines, exitCode: child.exitCode };
}
