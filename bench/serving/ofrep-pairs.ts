/**
 * `node dist/bench/serving/ofrep-pairs.js [--seconds N] [--repeats N] [--workers N] [--native-free] [--driver D]`:
 * the OFREP cases alone against their `/features/evaluated` counterparts on one seeded service, with the ratios issue
 * 43 asks for. Each pair is measured in rounds, the two cases one after the other and the order swapped every round
 * (whichever of two back-to-back runs goes first tends to do better on this VM: alternating cancels that out); a
 * pair's ratio is the median of its rounds' ratios. The full runner (`npm run bench`) measures the same cases in its
 * main scenarios.
 */
import { parseArgs } from "node:util";
import { bulkContextEntitiesBody, featureDefinitions, trafficEntitiesBodies } from "../support/fixtures.js";
import type { Lab } from "../support/lab.js";
import { detectDriver, type Driver } from "../support/load.js";
import { MODES } from "../support/modes.js";
import { median } from "../support/stats.js";
import { startService, tempDir } from "../support/processes.js";
import { waitCaughtUp } from "../support/projection.js";
import { postBulk, seedApp, type SeededApp } from "../support/seed.js";
import type { ServiceTarget } from "./evaluation-routes.js";
import { measureOfrepCase, ofrepCases, OFREP_FEATURE_COUNTS, OFREP_PAIRS } from "./ofrep-routes.js";

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
  const rounds = Number(values.repeats);
  const rates = new Map<string, number[]>();
  const ratios = new Map<string, number[]>();
  const failures = new Map<string, string>();
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
    const cases = new Map(ofrepCases(target, { withCounterparts: true }).map((ofrepCase) => [ofrepCase.id, ofrepCase]));
    // One measured run per case per round: the rounds are the repeats.
    const roundLab: Lab = { ...lab, mode: { ...mode, repeats: 1 } };
    for (let round = 0; round < rounds; round++) {
      for (const pair of OFREP_PAIRS) {
        const order = round % 2 === 0 ? [pair.baseline, pair.id] : [pair.id, pair.baseline];
        const measured = new Map<string, number>();
        for (const id of order) {
          const figure = await measureOfrepCase(roundLab, target, cases.get(id)!);
          if (figure.failure !== undefined) failures.set(id, figure.failure);
          measured.set(id, figure.value);
          rates.set(id, [...(rates.get(id) ?? []), figure.value]);
        }
        ratios.set(pair.id, [...(ratios.get(pair.id) ?? []), measured.get(pair.id)! / measured.get(pair.baseline)!]);
      }
    }
  } finally {
    await service.stop();
    data.remove();
    scratch.remove();
  }
  const lines = [`driver ${lab.driver}, ${native ? "native" : "native-free"}, workers ${workers}, ${rounds} rounds × ${seconds} s each, order swapped every round (medians)`];
  for (const [id, measured] of rates) {
    const text = failures.get(id) ?? `${Math.round(median(measured)).toLocaleString("en").padStart(9)} req/s (rounds: ${measured.map((rate) => Math.round(rate).toLocaleString("en")).join(", ")})`;
    lines.push(`  ${id.padEnd(26)} ${text}`);
  }
  for (const pair of OFREP_PAIRS) {
    const measured = ratios.get(pair.id) ?? [];
    const ratio = measured.length === 0 ? Number.NaN : median(measured);
    const rounds = measured.map((value) => value.toFixed(2)).join(", ");
    lines.push(`  ${pair.id} / ${pair.baseline}: ${Number.isFinite(ratio) ? ratio.toFixed(2) : "—"} (rounds: ${rounds}; target ≥ ${pair.target})`);
  }
  process.stdout.on("error", () => {});
  process.stdout.write(`${lines.join("\n")}\n`);
}

await main();
