/**
 * `node dist/tools/crash/run.js [--cycles 50] [--native 0|1]`: kill -9 cycles under load, figures printed as JSON.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { runCrashCycles } from "./crash-cycles.js";

const { values } = parseArgs({ options: { cycles: { type: "string", default: "50" }, native: { type: "string", default: "1" } } });
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
