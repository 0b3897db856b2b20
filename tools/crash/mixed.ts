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

const USAGE = `node dist/tools/crash/mixed.js [--cycles 50] [--native 1|0] [--durability commit|flush] [--concurrency 8]

Starts the built service on a fresh data dir and runs kill -9 cycles under mixed load (evaluation; /features/enabled,
whose evaluate events are stored before it answers; events, users, companies, /bulk bodies and feature-event batches;
feedback created, then updated by id), restarting on the same dir each time; then reads everything back through the
admin API and counts per kind what was acknowledged, lost (must be 0), stored in part (must be 0) and stored without
an acknowledgement (allowed). Prints the figures as JSON; exits 1 when anything acknowledged was lost or a multi-item
write was stored in part.
`;

const { values } = parseArgs({
  options: {
    help: { type: "boolean", short: "h" },
    cycles: { type: "string", default: "50" },
    native: { type: "string", default: "1" },
    durability: { type: "string", default: "commit" },
    concurrency: { type: "string", default: "8" },
  },
});
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
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
