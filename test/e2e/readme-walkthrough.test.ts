/**
 * The README's walk-through, run as written against a fresh service: its shell blocks are read from README.md, each
 * command runs in one bash session (curl, node and the `switchyard` alias, in a scratch directory whose `./data` is
 * the service's fresh data dir), and the answer lines it shows (`# ⇒ {…}`, the part of the JSON answer that
 * matters) are checked against what the command printed. So the page and the service cannot drift apart.
 *
 * What a reader does by hand is done for them, and nothing else is changed: the port is the test server's
 * (`localhost:3000` is replaced, and SWITCHYARD_PORT tells the CLI), the password prompt is answered from a file, and
 * `TOKEN=sya_…` gets the secret `tokens create` printed (kept in a file as it is printed).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnListening, type Listening } from "../../bench/support/spawn-listening.js";
import { ACCOUNT_TEST_ENV } from "../support/accounts.js";
import { CLI, NATIVE_MODE } from "../support/server.js";

const ROOT = resolve(import.meta.dirname, "../..");
const PASSWORD = "walk-through password 1";

interface Step {
  command: string;
  /** The `# ⇒` lines after it, parsed. */
  shown: unknown[];
}

/** The `sh` blocks of the README's "Walk-through" section, as commands (a quoted string may span lines). */
function walkThroughBlocks(readme: string): Step[][] {
  const section = readme.split(/^## /m).find((part) => part.startsWith("Walk-through"));
  if (section === undefined) throw new Error("README.md has no Walk-through section");
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => {
    const steps: Step[] = [];
    let pending = "";
    for (const line of match[1]!.split("\n")) {
      const shown = /^# ⇒ (.*)$/.exec(line);
      if (shown && pending === "") {
        steps.at(-1)!.shown.push(JSON.parse(shown[1]!));
        continue;
      }
      if (pending === "" && (line.trim() === "" || line.startsWith("#"))) continue;
      pending = pending === "" ? line : `${pending}\n${line}`;
      // An odd number of single quotes so far: the quoted string goes on on the next line.
      if ((pending.match(/'/g)?.length ?? 0) % 2 === 1) continue;
      steps.push({ command: pending, shown: [] });
      pending = "";
    }
    return steps;
  });
}

describe("the README walk-through on a fresh data dir", () => {
  let dir: string;
  let server: Listening;
  const output: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-readme-"));
    symlinkSync(join(ROOT, "dist"), join(dir, "dist"));
    writeFileSync(join(dir, "password"), `${PASSWORD}\n`);
    // `npm start` in another terminal, from the same directory: ./data, and an admin token generated on first start.
    // (Cheaper password hashes than the default, as in every suite: the answers are the same.)
    const env: Record<string, string> = { ...ACCOUNT_TEST_ENV, SWITCHYARD_PORT: "0", SWITCHYARD_HOST: "127.0.0.1", SWITCHYARD_NATIVE: NATIVE_MODE, SWITCHYARD_WORKERS: "1", SWITCHYARD_DATA_DIR: join(dir, "data") };
    server = await spawnListening([CLI, "serve"], { env, timeoutMs: 20_000, onLine: (line) => output.push(line) });
  });
  afterAll(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("answers every step as the README shows, the remote-context step included", { timeout: 120_000 }, () => {
    const blocks = walkThroughBlocks(readFileSync(join(ROOT, "README.md"), "utf8"));
    const steps = blocks.flat();
    expect(steps.some((step) => step.command.includes("context.company.id=initech"))).toBe(true);

    const script: string[] = ["set -e", "shopt -s expand_aliases"];
    const marker = (index: number) => `@@step ${index}@@`;
    steps.forEach((step, index) => {
      let command = step.command.replaceAll("localhost:3000", `127.0.0.1:${server.port}`);
      // The terminal's password prompt, answered: the CLI reads a piped stdin's first line.
      command = command.replace(/^alias (\w+)="([^"]+)"$/, (_, name: string, target: string) => `${name}() { ${target} "$@" < password; }`);
      // What the reader pastes: the secret the token command printed just before.
      if (/^TOKEN=sya_/.test(command)) command = `TOKEN=$(node -p 'JSON.parse(require("fs").readFileSync("token.json", "utf8")).secret')`;
      if (/ tokens create /.test(command)) command = `${command.replace(/\s+#.*$/, "")} > token.json; cat token.json`;
      script.push(command, `printf '\\n${marker(index)}\\n'`);
    });
    writeFileSync(join(dir, "walk-through.sh"), script.join("\n"));

    const run = spawnSync("bash", ["walk-through.sh"], { cwd: dir, encoding: "utf8", env: { ...process.env, SWITCHYARD_PORT: String(server.port) }, timeout: 110_000 });
    expect(run.status, `${run.stderr}\n${run.stdout}`).toBe(0);

    let rest = run.stdout;
    steps.forEach((step, index) => {
      const end = rest.indexOf(marker(index));
      expect(end, `no output marker after: ${step.command}`).toBeGreaterThanOrEqual(0);
      const printed = rest.slice(0, end).trim();
      rest = rest.slice(end + marker(index).length);
      for (const shown of step.shown) {
        expect(JSON.parse(printed), `${step.command}\nprinted: ${printed}`).toMatchObject(shown as object);
      }
    });
    expect(steps.filter((step) => step.shown.length > 0).length).toBeGreaterThanOrEqual(5);
  });
});
