import type { StoreUpgrade } from "../storage/schema-version.js";
import { REMOTE_CONTEXTS_UPGRADE } from "../tracking/remote-contexts.js";

/** Every upgrade a data dir from an older release needs, for each command that opens one (migrateStore). */
export const STORE_UPGRADES: readonly StoreUpgrade[] = [REMOTE_CONTEXTS_UPGRADE];
