/**
 * `switchyard backup --out FILE`: streams `GET /admin/backup` into FILE.partial and renames it to FILE only once its
 * trailer checked out, so FILE is always a whole backup (API.md §13.1).
 */
import { createWriteStream, renameSync, rmSync, statSync } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { AnswerError } from "./admin-client.js";
import { checkBackupFile } from "../management/operations/backup-format.js";

export async function downloadBackup(url: string, token: string, out: string): Promise<{ success: true; file: string; bytes: number }> {
  const response = await fetch(new URL("/admin/backup", url), { headers: { authorization: `Bearer ${token}` } });
  if (!response.ok || !response.body) {
    const text = await response.text();
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      throw new Error(`GET /admin/backup: HTTP ${response.status}: ${text.slice(0, 200)}`);
    }
    throw new AnswerError(answer);
  }
  const partial = `${out}.partial`;
  try {
    await pipeline(Readable.fromWeb(response.body as import("node:stream/web").ReadableStream<Uint8Array>), createWriteStream(partial, { mode: 0o600 }));
    const problem = checkBackupFile(partial);
    if (problem) throw new Error(`The backup received is not whole: ${problem}. Nothing was written to ${out}.`);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
  renameSync(partial, out);
  return { success: true, file: out, bytes: statSync(out).size };
}
