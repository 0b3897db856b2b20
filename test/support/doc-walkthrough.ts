/**
 * A markdown page's walk-through, run as written: the `sh` blocks of one section become one bash script (curl, node,
 * the `switchyard` alias), run in a directory whose `./data` is the service's data dir, and each command's answer is
 * checked against the `# ⇒ {…}` lines shown after it (the part of the JSON answer that matters). What a reader does
 * by hand is done for them: the port is the test server's, and the CLI's password prompt is answered from a file.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";

export interface WalkThroughStep {
  command: string;
  /** The `# ⇒` lines after it, parsed. */
  shown: unknown[];
}

/** The commands of the `sh` blocks of the section titled `title` (a quoted string may span lines). */
export function walkThroughSteps(markdown: string, title: string): WalkThroughStep[] {
  const section = markdown.split(/^## /m).find((part) => part.startsWith(title));
  if (section === undefined) throw new Error(`no section ${title}`);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((match) => {
    const steps: WalkThroughStep[] = [];
    let pending = "";
    for (const line of match[1]!.split("\n")) {
      const shown = /^# ⇒ (.*)$/.exec(line);
      if (shown && pending === "") {
        steps.at(-1)!.shown.push(JSON.parse(shown[1]!));
        continue;
      }
      if (pending === "" && (line.trim() === "" || line.startsWith("#"))) continue;
      pending = pending === "" ? line : `${pending}\n${line}`;
      if ((pending.match(/'/g)?.length ?? 0) % 2 === 1) continue;
      steps.push({ command: pending, shown: [] });
      pending = "";
    }
    return steps;
  });
}

/**
 * Runs the steps in `dir` against the service on `port` (passwords from `dir/password`) and checks every answer shown.
 * `rewrite` does what else a reader does by hand to a command (paste a secret printed before, say).
 */
export function runWalkThrough(dir: string, port: number, steps: WalkThroughStep[], rewrite: (command: string) => string = (command) => command, timeoutMs = 110_000): void {
  const script: string[] = ["set -e", "shopt -s expand_aliases"];
  const marker = (index: number) => `@@step ${index}@@`;
  steps.forEach((step, index) => {
    let command = step.command.replaceAll("localhost:3000", `127.0.0.1:${port}`);
    // The terminal's password prompt, answered: the CLI reads a piped stdin's first line.
    command = rewrite(command.replace(/^alias (\w+)="([^"]+)"$/, (_, name: string, target: string) => `${name}() { ${target} "$@" < password; }`));
    script.push(command, `printf '\\n${marker(index)}\\n'`);
  });
  writeFileSync(join(dir, "walk-through.sh"), script.join("\n"));
  const run = spawnSync("bash", ["walk-through.sh"], { cwd: dir, encoding: "utf8", env: { ...process.env, SWITCHYARD_PORT: String(port) }, timeout: timeoutMs });
  expect(run.status, `${run.stderr}\n${run.stdout}`).toBe(0);
  let rest = run.stdout;
  steps.forEach((step, index) => {
    const end = rest.indexOf(marker(index));
    expect(end, `no output marker after: ${step.command}`).toBeGreaterThanOrEqual(0);
    const printed = rest.slice(0, end).trim();
    rest = rest.slice(end + marker(index).length);
    for (const shown of step.shown) expect(JSON.parse(printed), `${step.command}\nprinted: ${printed}`).toMatchObject(shown as object);
  });
}
