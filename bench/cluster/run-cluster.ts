/**
 * `node dist/bench/cluster/run-cluster.js [--quick | --smoke] [--out FILE]`: the cluster benchmark alone (the full
 * runner, dist/bench/run.js, runs it as its last load phase). Prints the report's "## Cluster" section.
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { renderClusterMarkdown } from "./markdown.js";
import type { Lab } from "../support/lab.js";
import { detectDriver } from "../support/load.js";
import { MODES } from "../support/modes.js";
import { tempDir } from "../support/processes.js";
import { benchCluster } from "./cluster-bench.js";

const USAGE = `node dist/bench/cluster/run-cluster.js [--quick | --smoke] [--out FILE]

  Cluster mode against standalone: a real three-server nats-server JetStream cluster on 127.0.0.1, one standalone
  node and one cluster node under the same load (evaluation, POST /event), CPU per request, the propagation delay of
  a flag change to another node's SSE stream, and the catch-up rate of a node that starts empty.
  Skips, saying why, when nats-server is missing.

  (default)   full run (what the lead runs on a quiet machine)
  --quick     one short run per scenario
  --smoke     a few requests per scenario: checks the harness, not the service
  --out FILE  also write the section's JSON to FILE
`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { quick: { type: "boolean" }, smoke: { type: "boolean" }, out: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (values.quick && values.smoke) throw new Error("--quick and --smoke exclude each other");
  const mode = MODES[values.smoke ? "smoke" : values.quick ? "quick" : "full"];
  const scratch = tempDir("switchyard-bench-");
  const started = Date.now();
  const lab: Lab = {
    mode,
    driver: mode.name === "smoke" ? "probe" : detectDriver(),
    scratchDir: scratch.path,
    log: (message) => process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${message}\n`),
  };
  try {
    const cluster = await benchCluster(lab);
    if (values.out !== undefined) writeFileSync(values.out, `${JSON.stringify(cluster, null, 2)}\n`);
    process.stdout.write(renderClusterMarkdown(cluster));
  } finally {
    scratch.remove();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
