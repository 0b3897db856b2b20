/**
 * `node dist/bench/serving/ofrep-pairs.js [--seconds N] [--repeats N] [--workers N] [--native-free] [--driver D]`:
 * the OFREP cases alone, each right after its `/features/evaluated` counterpart on one seeded service, with the ratios
 * issue 43 asks for. The full runner (`npm run bench`) measures the same cases in its main scenarios.
 */
import { parseArgs } from "node:util";
import { bulkContextEntitiesBody, featureDefinitions, trafficEntitiesBodies } from "../support/fixtures.js";
import type { Lab, LoadFigure } from "../support/lab.js";
import { detectDriver, type Driver } from "../support/load.js";
import { MODES } from "../support/modes.js";
import { startService, tempDir } from "../support/processes.js";
import { waitCaughtUp } from "../support/projection.js";
import { postBulk, seedApp, type SeededApp } from "../support/seed.js";
import type { ServiceTarget } from "./evaluation-routes.js";
import { benchOfrep, OFREP_FEATURE_COUNTS, OFREP_PAIRS } from "./ofrep-routes.js";

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: "string", default: "5" },
      repeats: { type: "string", default: "3" },
      workers: { type: "string", default: "1" },
      "native-free": { type: "boolean" },
      driver: { type: "string" },
    },
  });
  const seconds = Number(values.seconds);
  const mode = { ...MODES.full, durationSeconds: seconds, maxDurationSeconds: Math.max(seconds, 1), warmupSeconds: Math.min(2, seconds), repeats: Number(values.repeats) };
  const scratch = tempDir("switchyard-ofrep-bench-");
  const data = tempDir("switchyard-ofrep-bench-data-");
  const started = performance.now();
  const lab: Lab = {
    mode,
    driver: (values.driver ?? detectDriver()) as Driver,
    scratchDir: scratch.path,
    log: (message) => process.stderr.write(`[ofrep ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${message}\n`),
  };
  const workers = Number(values.workers);
  const native = values["native-free"] !== true;
  const service = await startService({ dataDir: data.path, workers, native });
  let figures: LoadFigure[] = [];
  try {
    const apps = new Map<number, SeededApp>();
    for (const count of OFREP_FEATURE_COUNTS) {
      const app = await seedApp(service.url, `bench-${count}-features`, featureDefinitions(count));
      for (const body of trafficEntitiesBodies()) await postBulk(service.url, app.publishableKey, body);
      await postBulk(service.url, app.publishableKey, bulkContextEntitiesBody());
      apps.set(count, app);
    }
    await waitCaughtUp(service.url);
    const target: ServiceTarget = { baseUrl: service.url, server: { kind: "service", workers, native, pid: service.pid }, apps };
    figures = await benchOfrep(lab, target, { withCounterparts: true });
  } finally {
    await service.stop();
    data.remove();
    scratch.remove();
  }
  const byId = new Map(figures.map((figure) => [figure.id, figure]));
  const lines = [`driver ${lab.driver}, ${native ? "native" : "native-free"}, workers ${workers}, ${mode.repeats} × ${seconds} s each (median)`];
  for (const figure of figures) lines.push(`  ${figure.id.padEnd(26)} ${figure.failure ?? `${Math.round(figure.value).toLocaleString("en").padStart(9)} ${figure.unit}, p99 ${figure.latencyMs.p99.toFixed(2)} ms${figure.errors > 0 ? `, ${figure.errors} errors` : ""}`}`);
  for (const pair of OFREP_PAIRS) {
    const ratio = (byId.get(pair.id)?.value ?? Number.NaN) / (byId.get(pair.baseline)?.value ?? Number.NaN);
    lines.push(`  ${pair.id} / ${pair.baseline}: ${Number.isFinite(ratio) ? ratio.toFixed(2) : "—"} (target ≥ ${pair.target})`);
  }
  process.stdout.on("error", () => {});
  process.stdout.write(`${lines.join("\n")}\n`);
}

await main();
