/**
 * The one check of API.md §15's policy: every management change says here which environments' targeting or config it
 * writes (a table keyed by change type, so a new kind of change cannot be forgotten: TypeScript asks for its entry).
 * Where one of them requires approval, only an owner who says `bypass` with a reason may write directly; everyone
 * else gets 409 APPROVAL_REQUIRED. It runs inside apply and reads only the change and the store, so every cluster node
 * decides alike.
 */
import type { Actor } from "../../accounts/principal.js";
import type { ErrorData } from "../../errors/catalogue.js";
import { planImport } from "../operations/import-plan.js";
import { segmentRefs } from "../segments/inline.js";
import type { ApplyContext } from "../apply-context.js";
import type { ChangeOf, ChangeType, ManagementChange } from "../changes.js";
import { PolicyRepository } from "./policy.js";

type WrittenEnvironments<T extends ChangeType> = ((context: ApplyContext, change: ChangeOf<T>) => string[]) | null;

function appEnvironments(context: ApplyContext, appId: string): string[] {
  return context.tenancy.getApp(appId)?.environmentIds ?? [];
}

/** Per change type: the environments whose served targeting or config it would write; null for none ever. */
export const TARGETING_WRITES: { [T in ChangeType]: WrittenEnvironments<T> } = {
  "rules.put": (_context, change) => [change.environmentId],
  "feature.stage": (context, change) => appEnvironments(context, change.appId),
  "stage.update": (context, change) =>
    change.reapply && context.features.listFeatures(change.appId).some((feature) => feature.stageId === change.stageId) ? appEnvironments(context, change.appId) : [],
  "flags.import": (context, change) => {
    const app = context.tenancy.getApp(change.appId);
    const plan = app && planImport(context, app, change.document, change.ids, change.at);
    // A plan that fails is refused by the import itself, writing nothing.
    return plan && plan.ok ? [...new Set([...plan.writes.rules, ...plan.writes.prerequisites].map((write) => write.environmentId))] : [];
  },
  "segment.update": (context, change) => {
    if (change.fields.filter === undefined) return [];
    const features = context.features.listFeatures(change.appId);
    return appEnvironments(context, change.appId).filter((environmentId) =>
      features.some((feature) => segmentRefs(context.features.rulesOf(environmentId, feature.key).targeting.segmentRules ?? []).has(change.segmentId)),
    );
  },
  // Turning a feature off never waits (an emergency must not); turning it on is a targeting change like any other.
  "feature.enabled": (context, change) =>
    change.enabled && context.features.rulesOf(change.environmentId, change.featureKey).enabled === false ? [change.environmentId] : [],
  // Starting a rollout writes its first step: held like any targeting write. Its later steps, pause and rollback
  // follow from the start that was let through (a rollback, like turning a feature off, must not wait).
  "rollout.start": (_context, change) => [change.environmentId],
  "rollout.transition": null,
  // Prerequisites change who gets the feature, as its targeting does.
  "feature.prerequisites": (_context, change) => [change.environmentId],
  "feature.promote": (_context, change) => [change.toEnvironmentId],
  // Change requests are the approved path; their apply checks approvals itself.
  "change-request.create": null,
  "change-request.update": null,
  "change-request.review": null,
  "change-request.apply": null,
  "change-request.cancel": null,
  "change-request.fire": null,
  "policy.put": null,
  "app.create": null,
  "environment.create": null,
  "key.rotate": null,
  "feature.put": null,
  "feature.archive": null,
  "analytics.settings": null,
  "analytics.rebuild": null,
  "stage.create": null,
  "stage.delete": null,
  "survey.put": null,
  "survey.remove": null,
  "segment.create": null,
  "segment.delete": null,
  "backup.create": null,
  "opt-in.set": null,
  "member.create": null,
  "member.update": null,
  "member.remove": null,
  "password-reset.issue": null,
  "password-reset.complete": null,
  "token.create": null,
  "token.revoke": null,
  "session.create": null,
  "session.revoke": null,
  "sign-in.fail": null,
  "credential.touch": null,
  "admin-token.rotate": null,
  "admin-token.disable": null,
  "oauth-client.register": null,
  "oauth-code.issue": null,
  "oauth-code.redeem": null,
  "webhook.create": null,
  "webhook.update": null,
  "webhook.delete": null,
  "webhook.rotate-secret": null,
  "webhook.test": null,
  "webhook.redeliver": null,
  "webhook.claim": null,
  "webhook.attempt": null,
};

/** Whether the actor is an owner now (the admin token counts as one: it can do everything an owner can). */
export function actsAsOwner(context: ApplyContext, actor: Actor): boolean {
  if (actor.kind === "admin") return true;
  const memberId = actor.kind === "member" ? actor.id : actor.kind === "token" ? actor.memberId : undefined;
  return memberId !== undefined && context.accounts.getMember(memberId)?.role === "owner";
}

/** Whether any environment requires approval at all: the usual answer is no, and then nothing else is read. */
function anyApprovalRequired(context: ApplyContext): boolean {
  for (const { value } of context.store.table("policies").range({})) if (value.requireApproval) return true;
  return false;
}

/**
 * The refusal of a direct write held for approval; "bypassed" when an owner's bypass let it through (its audit entry
 * says so); undefined when no policy holds it.
 */
export function approvalHold(context: ApplyContext, change: ManagementChange): ErrorData | "bypassed" | undefined {
  const written = TARGETING_WRITES[change.type] as WrittenEnvironments<ChangeType>;
  if (!written || !anyApprovalRequired(context)) return undefined;
  const policies = new PolicyRepository(context.store);
  const held = written(context, change as ChangeOf<ChangeType>).flatMap((id) => {
    const environment = context.tenancy.getEnvironment(id);
    return environment && policies.policyOf(environment).requireApproval ? [environment.name] : [];
  });
  if (held.length === 0) return undefined;
  const where = `Environment ${[...new Set(held)].join(", ")} requires approval`;
  if (!actsAsOwner(context, change.actor)) return { code: "APPROVAL_REQUIRED", message: `${where}: propose a change request instead.` };
  if (!change.bypass) return { code: "APPROVAL_REQUIRED", message: `${where}: an owner writes directly only with bypass=true and a reason.` };
  return "bypassed";
}

