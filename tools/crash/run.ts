/**
 * `node dist/tools/crash/run.js [--cycles 50] [--native 0|1]`: kill -9 cycles under load, figures printed as JSON.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { runCrashCycles } from "./crash-cycles.js";

const USAGE = `node dist/tools/crash/run.js [--cycles 50] [--native 1|0]

Starts the built service on a fresh data dir and runs kill -9 cycles under tracking load (single events and /bulk
bodies): load, SIGKILL at a random moment, restart on the same dir, repeat; then counts what was acknowledged and is
missing (must be 0) and bulks stored in part (must be 0). Prints the figures as JSON; exits 1 when anything
acknowledged was lost or partly stored. --native 0 runs the native-free service.
`;

const { values } = parseArgs({ options: { help: { type: "boolean", short: "h" }, cycles: { type: "string", default: "50" }, native: { type: "string", default: "1" } } });
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const dataDir = mkdtempSync(join(tmpdir(), "switchyard-crash-"));
const started = Date.now();
const report = await runCrashCycles({
  cli: resolve(import.meta.dirname, "../../src/cli/main.js"),
  dataDir,
  cycles: Number(values.cycles),
  native: values.native!,
});
rmSync(dataDir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ ...report, native: values.native, seconds: (Date.now() - started) / 1000 }, null, 2)}\n`);
process.exit(report.lostEvents === 0 && report.partialBulks === 0 ? 0 : 1);
