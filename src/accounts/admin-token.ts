import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBase62 } from "../tenancy/identifiers.js";

export const ADMIN_TOKEN_FILE = "admin-token";

/**
 * The admin token: from configuration, else the one generated on the first start and kept (mode 0600) in the
 * data dir so that the CLI on the same machine can find it. `generated` is true only the first time.
 */
export function resolveAdminToken(dataDir: string, configured: string | undefined): { token: string; generated: boolean } {
  if (configured) return { token: configured, generated: false };
  const file = join(dataDir, ADMIN_TOKEN_FILE);
  if (existsSync(file)) return { token: readFileSync(file, "utf8").trim(), generated: false };
  mkdirSync(dataDir, { recursive: true });
  const token = newAdminToken();
  writeFileSync(file, `${token}\n`, { mode: 0o600, flag: "wx" });
  return { token, generated: true };
}

/** A fresh admin token: `adm_` + 40 base62 (about 238 random bits). */
export function newAdminToken(): string {
  return `adm_${randomBase62(40)}`;
}

/**
 * After a rotation (`token`) or a turn-off (null) through the service: when the data dir holds the token file, it
 * gets the new token (so the CLI on this machine keeps working) or goes away (no dead secret left lying there).
 * A file that was never there (SWITCHYARD_ADMIN_TOKEN configured) is not created.
 */
export function rewriteAdminTokenFile(dataDir: string, token: string | null): void {
  const file = join(dataDir, ADMIN_TOKEN_FILE);
  if (!existsSync(file)) return;
  if (token === null) {
    rmSync(file, { force: true });
    return;
  }
  // Written beside it and renamed over it, so a reader never sees half a token.
  const next = `${file}.next`;
  writeFileSync(next, `${token}\n`, { mode: 0o600 });
  renameSync(next, file);
}
