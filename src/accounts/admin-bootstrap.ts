import type { Config } from "../config/config.js";
import { resolveAdminToken } from "./admin-token.js";
import type { Logger } from "../observability/logger.js";
import { digestKey } from "../tenancy/identifiers.js";
import { matchesDigest } from "../tenancy/key-index.js";
import type { AccountRepository } from "./account-repository.js";

/**
 * The admin token at start. Until it is rotated or turned off through the service, it is the bootstrap token:
 * SWITCHYARD_ADMIN_TOKEN, or the one generated on the first start, printed once and kept in the data dir (mode
 * 0600). Once rotated or turned off, the store's record decides, and a configured token that differs is ignored
 * (with a log line that says so, never the token). Returns the bootstrap token's digest, if one stands.
 */
export function bootstrapAdminToken(config: Config, accounts: AccountRepository, log: Logger): string | undefined {
  const record = accounts.adminToken();
  if (record) {
    if (config.adminToken !== undefined && (record.digest === null || !matchesDigest(config.adminToken, record.digest))) {
      log.info("SWITCHYARD_ADMIN_TOKEN is ignored: the admin token was rotated or turned off through the service", { changedAt: record.changedAt, enabled: record.digest !== null });
    }
    return undefined;
  }
  const admin = resolveAdminToken(config.dataDir, config.adminToken);
  if (admin.generated) {
    // Printed once, on the start that created it; it stays readable only in the data dir (mode 0600).
    process.stdout.write(`Generated admin token (stored in ${config.dataDir}/admin-token): ${admin.token}\n`);
  }
  return digestKey(admin.token);
}
