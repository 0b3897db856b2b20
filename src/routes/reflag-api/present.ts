/** Switchyard records in the shapes the Reflag CLI reads (its published type declarations; API.md §10). */
import type { MemberRecord } from "../../accounts/account-records.js";
import type { ManagementPrincipal } from "../../accounts/principal.js";
import { displayName, type ConfigState, type FeatureRecord } from "../../features/feature-records.js";
import type { AppRecord, EnvironmentRecord } from "../../tenancy/tenancy-records.js";

/** The one organisation a Switchyard install is to the CLI. */
export const ORG = { id: "org_switchyard", name: "Switchyard" } as const;

export interface ReflagStage {
  id: string;
  name: string;
  order: number;
}

/**
 * An app with its environments. Exactly one is `isProduction`: the app's default environment (the one the tracking
 * key writes into, `production` unless set otherwise); the CLI lists flags and their remote configs there.
 */
export function presentReflagApp(app: AppRecord, environments: EnvironmentRecord[]) {
  return {
    id: app.id,
    name: app.name,
    demo: false,
    environments: environments.map((environment, order) => ({
      id: environment.id,
      name: environment.name,
      isProduction: environment.id === app.defaultEnvironmentId,
      order,
    })),
  };
}

/** The caller as the CLI's `user`: the member behind a session or token, or the admin token itself. */
export function presentReflagUser(principal: ManagementPrincipal, member: MemberRecord | undefined) {
  if (principal.kind === "admin" || !member) return { id: "admin", email: "admin@switchyard.local", name: "Admin token" };
  return { id: member.id, email: member.email, name: member.name };
}

/** Remote configs as Reflag lists them: one config per flag holding its variants; none when it has no variants. */
export function presentRemoteConfigs(feature: FeatureRecord, config: ConfigState) {
  const variants = config.variants as { key: string; payload?: unknown }[];
  if (variants.length === 0) return [];
  return [
    {
      id: feature.id,
      version: config.version,
      variants: variants.map((variant) => ({ variant: { key: variant.key, payload: variant.payload ?? null } })),
    },
  ];
}

export function presentReflagFlag(feature: FeatureRecord, stage: ReflagStage | null, remoteConfigs: unknown[]) {
  return {
    id: feature.id,
    key: feature.key,
    name: displayName(feature),
    description: feature.description,
    createdAt: feature.createdAt,
    stage,
    remoteConfigs,
  };
}
