import type { Credentials } from "../routes/core/credentials.js";
import type { FlagStateNotifier } from "../features/flag-state-notifier.js";
import type { KeyIndex } from "../tenancy/key-index.js";
import type { ManagementLog } from "../management/management-log.js";

/**
 * What follows an applied change on this node, whoever submitted it: live streams and waiting requests hear of new
 * flagStateVersions, the key index forgets rotated keys at once, the admin token is re-read after a rotation.
 */
export function observeAppliedChanges(management: ManagementLog, parts: { flagStates: FlagStateNotifier; keys: KeyIndex; credentials: Credentials }): void {
  management.onApplied((change, outcome) => {
    for (const [environmentId, flagStateVersion] of outcome.effects.flagStates) parts.flagStates.announce(environmentId, flagStateVersion);
    if (outcome.effects.keys) {
      for (const digest of outcome.effects.keys.revokedDigests) parts.keys.forget(digest);
      parts.keys.reload();
    }
    if (change.type === "admin-token.rotate" || change.type === "admin-token.disable") parts.credentials.reloadAdminToken();
  });
}
