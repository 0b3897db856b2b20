import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
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
  const token = `adm_${randomBase62(40)}`;
  writeFileSync(file, `${token}\n`, { mode: 0o600, flag: "wx" });
  return { token, generated: true };
}
