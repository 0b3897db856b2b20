/**
 * `switchyard backup | restore | export | import [unleash] | projections` (API.md §13, docs/RELIABILITY.md). Each prints the JSON answer on stdout and
 * exits 0 only on success; a refused request prints the service's error answer and exits 1.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { AdminClient, AnswerError } from "./admin-client.js";
import { commandCredential, type CliEnvironment } from "./environment.js";
import { downloadBackup } from "./backup-download.js";
import { restoreBackup } from "../management/operations/restore.js";
import { PROJECTION_USAGE, runProjectionCommand } from "./projection-commands.js";

export const OPERATIONS_USAGE = `Operations (docs/OPERATIONS.md; API.md §13):
  switchyard backup --out FILE                     (an online backup of the whole store; owners or the admin token)
  switchyard restore FILE [--data-dir DIR]         (offline, into an absent or empty DIR; default $SWITCHYARD_DATA_DIR, ./data)
  switchyard export APP_ID [--out FILE]            (the app's flags as a switchyard.flags/v1 document)
  switchyard import APP_ID FILE [--dry-run]        (applies a document; --dry-run lists the changes and makes none)
  switchyard import unleash APP_ID --unleash-url URL --unleash-token TOKEN (or UNLEASH_TOKEN) [--project P]
        --env UNLEASH_ENV=OUR_ENV [--env ...] [--context-mapping FILE.json] [--dry-run]
${PROJECTION_USAGE}`;

const COMMANDS = new Set(["backup", "restore", "export", "import", "projections"]);

export function isOperationsCommand(argv: readonly string[]): boolean {
  return argv.length > 0 && COMMANDS.has(argv[0]!);
}

function required(value: string | undefined, name: string): string {
  if (!value) throw new Error(`Missing ${name}.\n\n${OPERATIONS_USAGE}`);
  return value;
}

/** `KEY=VALUE` pairs of repeated `--env` options. */
function environmentMapping(pairs: string[]): Record<string, string> {
  const mapping: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at <= 0 || at === pair.length - 1) throw new Error(`--env takes UNLEASH_ENV=OUR_ENV, not ${pair}.`);
    mapping[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return mapping;
}

async function run(argv: string[], environment: CliEnvironment): Promise<unknown> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      url: { type: "string" },
      token: { type: "string" },
      out: { type: "string" },
      "data-dir": { type: "string" },
      "dry-run": { type: "boolean" },
      "unleash-url": { type: "string" },
      "unleash-token": { type: "string" },
      project: { type: "string" },
      env: { type: "string", multiple: true },
      "context-mapping": { type: "string" },
    },
  });
  const [command, first, second] = positionals;
  if (command === "projections") {
    const { ok, report } = await runProjectionCommand(first, values["data-dir"], environment.service);
    if (!ok) throw new AnswerError(report);
    return report;
  }
  if (command === "restore") {
    const dataDir = values["data-dir"] ?? environment.dataDir;
    return restoreBackup(required(first, "FILE"), dataDir);
  }
  const url = values.url ?? environment.serviceUrl;
  const token = commandCredential(values.token, environment);
  const client = new AdminClient(url, token);
  const dryRun = values["dry-run"] === true ? "?dryRun=true" : "";
  switch (command) {
    case "backup":
      return downloadBackup(url, token, required(values.out, "--out FILE"));
    case "export": {
      const answer = await client.call("GET", `/admin/apps/${encodeURIComponent(required(first, "APP_ID"))}/export`);
      if (values.out === undefined) return answer.document;
      writeFileSync(values.out, `${JSON.stringify(answer.document, null, 2)}\n`);
      return { success: true, file: values.out };
    }
    case "import": {
      if (first === "unleash") {
        const body: Record<string, unknown> = {
          url: required(values["unleash-url"], "--unleash-url URL"),
          token: required(values["unleash-token"] ?? environment.unleashToken, "--unleash-token TOKEN (or UNLEASH_TOKEN)"),
          environments: environmentMapping(values.env ?? []),
        };
        if (values.project !== undefined) body.project = values.project;
        if (values["context-mapping"] !== undefined) body.contextMapping = JSON.parse(readFileSync(values["context-mapping"], "utf8")) as unknown;
        return client.call("POST", `/admin/apps/${encodeURIComponent(required(second, "APP_ID"))}/import/unleash${dryRun}`, body);
      }
      // Sent as written: the service validates it and names each problem by its path in the file.
      const text = readFileSync(required(second, "FILE"), "utf8");
      return client.call("POST", `/admin/apps/${encodeURIComponent(required(first, "APP_ID"))}/import${dryRun}`, undefined, text);
    }
    default:
      throw new Error(OPERATIONS_USAGE);
  }
}

/** Runs one operations command and sets the exit code (0 only on success). */
export async function runOperationsCommand(argv: string[], environment: CliEnvironment): Promise<void> {
  try {
    const result = await run(argv, environment);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } catch (error) {
    if (error instanceof AnswerError) process.stdout.write(`${JSON.stringify(error.answer, null, 2)}\n`);
    else process.stderr.write(`${(error as Error).message ?? String(error)}\n`);
    process.exitCode = 1;
  }
}
