/**
 * `node dist/tools/crash/mixed.js [--cycles 50] [--native 0|1] [--durability commit|flush] [--concurrency 8]`:
 * kill -9 cycles under mixed load (evaluation, tracking, feedback), figures printed as JSON. Exits 1 if anything
 * acknowledged was lost or a multi-item write was stored in part.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { runMixedCrashCycles } from "./mixed-cycles.js";

const { values } = parseArgs({
  options: {
    cycles: { type: "string", default: "50" },
    native: { type: "string", default: "1" },
    durability: { type: "string", default: "commit" },
    concurrency: { type: "string", default: "8" },
  },
});
if (values.durability !== "commit" && values.durability !== "flush") throw new Error("--durability must be commit or flush");
const dataDir = mkdtempSync(join(tmpdir(), "switchyard-crash-mixed-"));
const started = Date.now();
try {
  const report = await runMixedCrashCycles({
    cli: resolve(import.meta.dirname, "../../src/cli/main.js"),
    dataDir,
    cycles: Number(values.cycles),
    native: values.native!,
    durability: values.durability,
    concurrency: Number(values.concurrency),
  });
  const lost = Object.values(report.kinds).reduce((sum, figures) => sum + figures.lost, 0);
  const partial = Object.values(report.kinds).reduce((sum, figures) => sum + figures.partial, 0);
  process.stdout.write(`${JSON.stringify({ ...report, failures: report.failures.slice(0, 20), lost, partial, date: new Date().toISOString(), seconds: (Date.now() - started) / 1000 }, null, 2)}\n`);
  process.exitCode = lost === 0 && partial === 0 && report.failures.length === 0 ? 0 : 1;
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
