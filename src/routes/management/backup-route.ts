/**
 * `GET /admin/backup` (API.md §13.1): the store copied as of one point of its commit order (LMDB's compacting
 * env copy, taken by a read transaction, so the writer and every reader go on; the native-free store's snapshot of
 * its committed tables), then streamed in the backup format
 * with its trailer. The copy lives in a temp dir inside the data dir (same disk, so it can always be written where the
 * store fits) and is removed once streamed, or when the client goes away.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { managementRoute, BODY_LIMITS, type RouteContext } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import type { StreamResponse, StreamSink } from "../../http/types.js";
import type { RouteSpec } from "../core/route.js";
import { ADMIN_TOKEN_FILE } from "../../accounts/admin-token.js";
import { ServiceError } from "../../errors/catalogue.js";
import { submitChange } from "../core/submit.js";
import type { Services } from "../core/services.js";
import { BACKUP_FORMAT, BACKUP_MAGIC, BackupDigest, entryLine, manifestLine, type BackupManifest } from "../../management/operations/backup-format.js";

const WORK_DIR_PREFIX = ".backup-in-progress-";
const CHUNK_BYTES = 1024 * 1024;

/** `switchyard-20261128T093000Z.backup` */
export function backupFileName(at: Date): string {
  return `switchyard-${at.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")}.backup`;
}

/** Work dirs of backups streaming now in this process: never stale, whatever their age. */
const active = new Set<string>();
/** A work dir older than this that no backup here is streaming was left by a process that died. */
const STALE_AFTER_MS = 60 * 60 * 1000;
/** A response whose stream never started (the client left during the copy) releases its copy after this long. */
const UNSTARTED_AFTER_MS = 60 * 1000;

function removeStaleWorkDirs(dataDir: string): void {
  for (const name of readdirSync(dataDir)) {
    const path = join(dataDir, name);
    if (!name.startsWith(WORK_DIR_PREFIX) || active.has(path)) continue;
    if (Date.now() - statSync(path).mtimeMs > STALE_AFTER_MS) rmSync(path, { recursive: true, force: true });
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Streams the files; a client that goes away stops it. The work dir is removed either way. */
async function streamFiles(sink: StreamSink, store: BackupManifest["store"], files: { name: string; path: string; bytes: number }[], createdAt: string, cleanup: () => void): Promise<void> {
  let closed = false;
  sink.onClose(() => (closed = true));
  const digest = new BackupDigest();
  digest.add(Buffer.from(BACKUP_MAGIC, "latin1"));
  let stalls = 0;
  const send = async (chunk: Uint8Array) => {
    if (closed) return;
    if (sink.write(digest.add(chunk))) stalls = 0;
    // The sink has no drain signal: after a chunk the socket could not take at once, give it time before the next.
    else await pause(Math.min(50, ++stalls));
  };
  try {
    await send(manifestLine({ format: BACKUP_FORMAT, store, createdAt }));
    for (const file of files) {
      await send(entryLine(file.name, file.bytes));
      const handle = await open(file.path, "r");
      try {
        for (let position = 0; position < file.bytes && !closed; ) {
          const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, file.bytes - position));
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
          if (bytesRead !== buffer.length) throw new Error(`${file.name} changed while it was streamed`);
          position += bytesRead;
          await send(buffer);
        }
      } finally {
        await handle.close();
      }
    }
    // Only a stream that got this far gets its trailer; anything cut before has none and is refused on restore.
    if (!closed) sink.write(digest.trailer());
  } finally {
    cleanup();
    sink.end();
  }
}

async function backup(context: RouteContext<Services>): Promise<StreamResponse> {
  const { principal, services } = context;
  // A read by method, but a copy of every secret digest: owners and the admin token only, never a read-only token.
  if (principal.kind === "token" && principal.readOnly) throw new ServiceError("FORBIDDEN", "A read-only token cannot take a backup.");
  const { store, config } = services;
  if (!store.copyTo) throw new ServiceError("CONFLICT", `The ${store.kind} store cannot be backed up online; stop the service and copy ${config.dataDir}.`);
  const at = new Date();
  if (services.cluster) await services.cluster.applyEverythingLogged();
  removeStaleWorkDirs(config.dataDir);
  const work = mkdtempSync(join(config.dataDir, WORK_DIR_PREFIX));
  active.add(work);
  const cleanup = () => {
    rmSync(work, { recursive: true, force: true });
    active.delete(work);
  };
  let files: { name: string; path: string; bytes: number }[];
  try {
    await store.copyTo(work);
    // The generated admin token lives beside the store, not in it (the configured one is configuration, not data):
    // copied with the store, so a rotation while the backup streams cannot mix two tokens into it.
    const token = join(config.dataDir, ADMIN_TOKEN_FILE);
    if (existsSync(token)) writeFileSync(join(work, ADMIN_TOKEN_FILE), readFileSync(token), { mode: 0o600 });
    files = readdirSync(work).map((name) => ({ name, path: join(work, name), bytes: statSync(join(work, name)).size }));
    await submitChange(context, "backup.create", { bytes: files.reduce((sum, file) => sum + file.bytes, 0) });
  } catch (error) {
    cleanup();
    throw error;
  }
  // A front end does not start the stream of a client that left meanwhile: the copy must not outlive it.
  let started = false;
  setTimeout(() => {
    if (!started) cleanup();
  }, UNSTARTED_AFTER_MS).unref();
  return {
    status: 200,
    headers: {
      "content-type": "application/octet-stream",
      "content-disposition": `attachment; filename="${backupFileName(at)}"`,
      "cache-control": "no-store",
    },
    preamble: BACKUP_MAGIC,
    start(sink) {
      started = true;
      streamFiles(sink, store.kind, files, at.toISOString(), cleanup).catch((error: unknown) => {
        services.log.error("backup stream failed", { error: String((error as Error)?.stack ?? error) });
      });
    },
  };
}

export const BACKUP_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [["GET", "/admin/backup", managementRoute<Services>("members", BODY_LIMITS.none, backup)]];
