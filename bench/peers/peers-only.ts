/**
 * `npm run bench -- --peers`: the peers alone, written to <date>-<host>-peers.{json,md} (the full run puts the same
 * section in its own report) and printed on stdout.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, hostname, loadavg, totalmem } from "node:os";
import { join, relative } from "node:path";
import { table } from "../report/format.js";
import type { Lab } from "../support/lab.js";
import { renderPeersMarkdown } from "./markdown.js";
import { benchPeers } from "./peers-bench.js";

export async function runPeersOnly(lab: Lab, outDir: string, argv: readonly string[]): Promise<void> {
  const started = new Date();
  const startLoad = loadavg();
  const peers = await benchPeers(lab);
  const finished = new Date();
  const cpu = cpus()[0]?.model.trim() ?? "unknown";
  const meta = {
    date: started.toISOString().slice(0, 10),
    host: hostname(),
    mode: lab.mode.name,
    command: ["node", "dist/bench/run.js", ...argv].join(" "),
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    node: process.version,
    cpus: { count: availableParallelism(), model: cpu },
    memoryBytes: totalmem(),
    loadAverage: { atStart: startLoad, atEnd: loadavg() },
    driver: lab.driver,
  };
  const header = [
    `# Switchyard against its peers — ${meta.date} on ${meta.host} (${meta.mode})`,
    table(
      ["", ""],
      [
        ["command", `\`${meta.command}\``],
        ["machine", `${meta.cpus.count} × ${meta.cpus.model}, ${(meta.memoryBytes / 1024 ** 3).toFixed(1)} GiB RAM`],
        ["node", meta.node],
        ["load generator", meta.driver],
        ["load average (1/5/15 min)", `at start ${startLoad.map((value) => value.toFixed(2)).join(" / ")}, at end ${meta.loadAverage.atEnd.map((value) => value.toFixed(2)).join(" / ")}`],
      ],
    ),
    ...(lab.mode.name === "full" ? [] : [`_${lab.mode.name} run: checks the harness; these figures are not for quoting._`]),
  ];
  const markdown = renderPeersMarkdown(peers, header);
  mkdirSync(outDir, { recursive: true });
  const base = join(outDir, `${meta.date}-${meta.host.replace(/[^A-Za-z0-9._-]/g, "_")}-peers`);
  // NaN (a figure that could not be measured) becomes null in JSON.
  writeFileSync(`${base}.json`, `${JSON.stringify({ meta, peers }, null, 2)}\n`);
  writeFileSync(`${base}.md`, markdown);
  process.stdout.write(`${markdown}\n${relative(process.cwd(), `${base}.json`)}\n${relative(process.cwd(), `${base}.md`)}\n`);
}
