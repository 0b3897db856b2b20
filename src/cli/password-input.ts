import { createInterface } from "node:readline";
import { Writable } from "node:stream";

/** All of stdin as text (a password piped in: `printf '%s' "$PW" | switchyard members add …`). */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** One line from the terminal without echoing it. */
function askHidden(prompt: string): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stderr.write(chunk as Buffer);
      done();
    },
  });
  const reader = createInterface({ input: process.stdin, output, terminal: true });
  return new Promise((resolve) => {
    reader.question(prompt, (answer) => {
      reader.close();
      process.stderr.write("\n");
      resolve(answer);
    });
    muted = true;
  });
}

/**
 * A password for the CLI: never an argument (it would sit in shell history and `ps`). Piped stdin gives its first
 * line; a terminal is asked twice, without echo.
 */
export async function readPassword(what = "Password"): Promise<string> {
  if (!process.stdin.isTTY) return (await readStdin()).split(/\r?\n/, 1)[0] ?? "";
  const first = await askHidden(`${what}: `);
  const second = await askHidden(`${what} again: `);
  if (first !== second) throw new Error("The two passwords differ.");
  return first;
}
