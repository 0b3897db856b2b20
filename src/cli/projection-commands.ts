/**
 * `switchyard projections rebuild | verify [--data-dir DIR]` (docs/RELIABILITY.md): offline work on a data dir's
 * tracking log and what is projected from it.
 */
import { loadConfig } from "../config/config.js";
import { TRACKING_PROJECTIONS } from "../serving/tracking-projections.js";
import { createLogger } from "../observability/logger.js";
import { rebuildProjections, verifyProjections } from "../management/operations/rebuild-projections.js";
import { selectAdapters } from "../composition/adapters.js";
import { migrateStore } from "../storage/schema-version.js";
import { STORE_UPGRADES } from "../composition/store-upgrades.js";

export const PROJECTION_USAGE = `  switchyard projections rebuild [--data-dir DIR] (offline: users, companies, event logs and analytics projected
                                                   again from the tracking log, in one transaction)
  switchyard projections verify [--data-dir DIR]  (offline: whether what is projected equals a rebuild from the log;
                                                   exits 1 when it does not; changes nothing)
`;

/** Runs it on the data dir of SWITCHYARD_DATA_DIR (or --data-dir); answers the report, `ok` false when it failed. */
export async function runProjectionCommand(action: string | undefined, dataDir: string | undefined, service: NodeJS.ProcessEnv): Promise<{ ok: boolean; report: unknown }> {
  if (action !== "rebuild" && action !== "verify") throw new Error(`switchyard projections takes rebuild or verify.\n\n${PROJECTION_USAGE}`);
  const config = loadConfig(dataDir === undefined ? service : { ...service, SWITCHYARD_DATA_DIR: dataDir });
  const { store } = await selectAdapters(config, createLogger("silent"));
  try {
    await migrateStore(store, STORE_UPGRADES);
    if (action === "rebuild") return { ok: true, report: { success: true, ...(await rebuildProjections(store, TRACKING_PROJECTIONS)) } };
    const report = await verifyProjections(store, TRACKING_PROJECTIONS);
    return { ok: report.equal, report: { success: report.equal, ...report } };
  } finally {
    await store.close();
  }
}
