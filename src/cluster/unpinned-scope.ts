/**
 * What a node of a region that also serves the unpinned apps (SWITCHYARD_REGION_SERVES_UNPINNED, docs/CLUSTER.md)
 * takes from the unregioned streams and sends to them: only what concerns an unpinned app. Everything else —
 * members, tokens, sessions, the admin token, sign-in bookkeeping — is account data, which such a node keeps in its
 * region's streams only (the region's accounts are its own).
 */
import type { ManagementChange } from "../management/changes.js";
import type { AppRecord } from "../tenancy/tenancy-records.js";
import type { TenancyRepository } from "../tenancy/tenancy-repository.js";

/** The app an environment belongs to, when this node holds both. */
function appOfEnvironment(environmentId: string, tenancy: TenancyRepository): AppRecord | undefined {
  const environment = tenancy.getEnvironment(environmentId);
  return environment === undefined ? undefined : tenancy.getApp(environment.appId);
}

/** The app a change writes to (the new record for `app.create`); undefined when not held here; null for account changes. */
function appOf(change: ManagementChange, tenancy: TenancyRepository): AppRecord | undefined | null {
  switch (change.type) {
    case "app.create":
      return change.app;
    case "environment.create":
      return tenancy.getApp(change.environment.appId);
    case "feature.put":
    case "feature.archive":
    case "stage.create":
    case "stage.update":
    case "stage.delete":
    case "feature.stage":
    case "segment.create":
    case "segment.update":
    case "segment.delete":
    case "flags.import":
    case "opt-in.set":
    case "webhook.update":
    case "webhook.delete":
    case "webhook.rotate-secret":
    case "webhook.test":
    case "webhook.redeliver":
    case "webhook.claim":
    case "webhook.attempt":
      return tenancy.getApp(change.appId);
    case "webhook.create":
      return tenancy.getApp(change.webhook.appId);
    case "key.rotate":
    case "rules.put":
    case "analytics.settings":
    case "analytics.rebuild":
    case "survey.put":
    case "survey.remove":
    case "feature.enabled":
    case "feature.prerequisites":
    case "policy.put":
    case "change-request.create":
    case "change-request.update":
    case "change-request.review":
    case "change-request.apply":
    case "change-request.cancel":
    case "change-request.fire":
    case "rollout.start":
    case "rollout.transition":
      return appOfEnvironment(change.environmentId, tenancy);
    case "feature.promote":
      return appOfEnvironment(change.toEnvironmentId, tenancy);
    case "member.create":
    case "member.update":
    case "member.remove":
    case "password-reset.issue":
    case "password-reset.complete":
    case "token.create":
    case "token.revoke":
    case "session.create":
    case "session.revoke":
    case "sign-in.fail":
    case "credential.touch":
    case "admin-token.rotate":
    case "admin-token.disable":
    case "oauth-client.register":
    case "oauth-code.issue":
    case "oauth-code.redeem":
    case "backup.create":
      return null;
  }
}

/**
 * Whether a change concerns an app this node holds (or creates) and that is pinned to no region. False for account
 * changes, for an app of a region, and for an app this node does not hold (its change is then refused through the
 * node's own region's log like any change of an unknown app).
 */
export function concernsUnpinnedApp(change: ManagementChange, tenancy: TenancyRepository): boolean {
  const app = appOf(change, tenancy);
  return app !== null && app !== undefined && app.region === undefined;
}

/** Whether an environment belongs to an app this node holds that is pinned to no region (tracking's routing). */
export function environmentIsUnpinned(environmentId: string, tenancy: TenancyRepository): boolean {
  const app = appOfEnvironment(environmentId, tenancy);
  return app !== undefined && app.region === undefined;
}
