import { newAdminToken, rewriteAdminTokenFile } from "../accounts/admin-token.js";
import type { Config } from "../config/config.js";
import { LocalManagementLog } from "../management/management-log.js";
import { newEnvelope } from "../management/envelope.js";
import { ADMIN_ACTOR } from "../accounts/principal.js";
import { selectAdapters } from "../composition/adapters.js";
import { migrateStore } from "../storage/schema-version.js";
import { STORE_UPGRADES } from "../composition/store-upgrades.js";
import { digestKey, maskKey } from "../tenancy/identifiers.js";
import { createLogger } from "../observability/logger.js";

/**
 * `switchyard admin-token reset`: the way back in when the admin token is lost or turned off and no owner can sign
 * in. It needs the data dir, not the network: whoever can read the data dir already holds everything. The change
 * is applied through the same apply path (audited, address null). A running LMDB service picks the new token up
 * within its poll period; the native-free store is locked by a running service, so stop it first.
 */
export async function resetAdminTokenOffline(config: Config): Promise<string> {
  const { store } = await selectAdapters(config, createLogger("silent"));
  try {
    await migrateStore(store, STORE_UPGRADES);
    const token = newAdminToken();
    const change = { ...newEnvelope(ADMIN_ACTOR, null), type: "admin-token.rotate" as const, digest: digestKey(token), hint: maskKey(token) };
    const outcome = await new LocalManagementLog(store).submit(change);
    if (!outcome.ok) throw new Error(outcome.error.message);
    rewriteAdminTokenFile(config.dataDir, token);
    return token;
  } finally {
    await store.close();
  }
}
