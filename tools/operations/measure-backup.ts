/**
 * Measures an online backup and its restore for a store of N users and N companies (issue 32's closing figure):
 * starts the built service on a temp data dir, fills it through `/bulk` (each user in its own company), then times
 * `switchyard backup --out` and `switchyard restore`, and prints sizes and times as JSON.
 *
 *   npm run build && node dist/tools/operations/measure-backup.js [N=1000000]
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { spawnListening } from "../../bench/support/spawn-listening.js";

const CLI = resolve(import.meta.dirname, "../../src/cli/main.js");
const ADMIN_TOKEN = "adm_measure_backup_0123456789abcdefghijklmnop";
const count = Number(process.argv[2] ?? 1_000_000);
const BATCH = 5_000;

/**
 * The process's anonymous resident memory now, in bytes (Linux): heap and buffers. LMDB's pages mapped from the data
 * file count as RssFile, reclaimable page cache, and are left out.
 */
function rss(pid: number): number {
  const match = /RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) * 1024 : 0;
}

/** Runs the CLI without blocking this process (so the service's memory can be sampled meanwhile). */
function runCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("close", (code) => resolveRun({ code, output }));
  });
}

function duSize(path: string): number {
  const out = spawnSync("du", ["-sb", path], { encoding: "utf8" }).stdout;
  return Number(out.split("\t")[0]);
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "switchyard-measure-backup-"));
  const dataDir = join(work, "data");
  const service = await spawnListening([CLI, "serve"], {
    env: { SWITCHYARD_PORT: "0", SWITCHYARD_HOST: "127.0.0.1", SWITCHYARD_DATA_DIR: dataDir, SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN },
    timeoutMs: 30_000,
  });
  try {
    const created = await (await fetch(`${service.url}/admin/apps`, { method: "POST", headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" }, body: JSON.stringify({ name: "Measure" }) })).json() as { app: { environments: { name: string; secretKey: string; publishableKey: string }[] } };
    const secret = created.app.environments.find((environment) => environment.name === "production")!.secretKey;
    const fillStarted = performance.now();
    for (let start = 0; start < count; start += BATCH) {
      const items = [];
      for (let n = start; n < Math.min(count, start + BATCH); n++) {
        items.push({ type: "user", userId: `user-${n}`, attributes: { email: `user-${n}@example.com`, plan: n % 3 === 0 ? "pro" : "free" } });
        items.push({ type: "company", companyId: `company-${n}`, userId: `user-${n}`, attributes: { name: `Company ${n}`, seats: n % 500 } });
      }
      const response = await fetch(`${service.url}/bulk`, { method: "POST", headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" }, body: JSON.stringify(items) });
      if (!response.ok) throw new Error(`bulk at ${start}: ${response.status} ${await response.text()}`);
    }
    const fillSeconds = (performance.now() - fillStarted) / 1000;
    const file = join(work, "store.backup");
    const rssBefore = rss(service.pid);
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rss(service.pid))), 50);
    // Evaluations keep going while the backup runs: how the service answers meanwhile.
    const publishable = created.app.environments.find((environment) => environment.name === "production")!.publishableKey;
    const evaluate = async (latencies: number[], running: () => boolean) => {
      for (let n = 0; running(); n++) {
        const started = performance.now();
        const response = await fetch(`${service.url}/features/evaluated?publishableKey=${publishable}&context.company.id=company-${n % count}`);
        await response.arrayBuffer();
        if (response.ok) latencies.push(performance.now() - started);
      }
    };
    // The same loop for 3 s without a backup: the baseline.
    const baseline: number[] = [];
    const baselineEnds = performance.now() + 3_000;
    await evaluate(baseline, () => performance.now() < baselineEnds);
    const latencies: number[] = [];
    let backingUp = true;
    const evaluations = evaluate(latencies, () => backingUp);
    const backupStarted = performance.now();
    const backup = await runCli(["backup", "--out", file, "--url", service.url], { SWITCHYARD_TOKEN: ADMIN_TOKEN });
    const backupSeconds = (performance.now() - backupStarted) / 1000;
    backingUp = false;
    await evaluations;
    clearInterval(sampler);
    const percentiles = (values: number[]) => {
      values.sort((a, b) => a - b);
      const at = (p: number) => Number((values[Math.min(values.length - 1, Math.floor((p / 100) * values.length))] ?? 0).toFixed(2));
      return { count: values.length, p50: at(50), p99: at(99), max: at(100) };
    };
    if (backup.code !== 0) throw new Error(`backup failed: ${backup.output}`);
    const restoreDir = join(work, "restored");
    const restoreStarted = performance.now();
    const restore = spawnSync(process.execPath, [CLI, "restore", file, "--data-dir", restoreDir], { encoding: "utf8" });
    const restoreSeconds = (performance.now() - restoreStarted) / 1000;
    if (restore.status !== 0) throw new Error(`restore failed: ${restore.stderr}`);
    console.log(
      JSON.stringify(
        {
          users: count,
          companies: count,
          fillSeconds: Number(fillSeconds.toFixed(1)),
          dataDirBytes: duSize(dataDir),
          dataMdbBytes: statSync(join(dataDir, "data.mdb")).size,
          backupBytes: statSync(file).size,
          backupSeconds: Number(backupSeconds.toFixed(2)),
          serviceAnonRssBeforeBackupBytes: rssBefore,
          serviceAnonRssPeakDuringBackupBytes: rssPeak,
          evaluationMsWithoutBackup: percentiles(baseline),
          evaluationMsDuringBackup: percentiles(latencies),
          restoreSeconds: Number(restoreSeconds.toFixed(2)),
        },
        null,
        2,
      ),
    );
  } finally {
    await service.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
