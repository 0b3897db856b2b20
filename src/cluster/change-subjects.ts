import type { ManagementChange } from "../management/changes.js";

/** A subject token from any string: base64url has only letters, digits, `-` and `_`, none of NATS's specials. */
const token = (value: string): string => Buffer.from(value, "utf8").toString("base64url") || "_";

/**
 * The configuration subject of a change: the thing whose state the change reads and rewrites. Optimistic
 * concurrency works per subject (JetStream's expected last sequence per subject), so two changes of one feature's
 * targeting conflict and the second is retried after the first, while changes of different features never wait for
 * each other. `null`: a bookkeeping change that rewrites nothing it read (usage stamps, failed sign-ins), published
 * without an expectation.
 */
export function changeSubject(change: ManagementChange): { subject: string; concurrency: boolean } {
  const scoped = (subject: string) => ({ subject, concurrency: true });
  switch (change.type) {
    case "app.create":
      return scoped(`app.${token(change.app.id)}`);
    case "environment.create":
      return scoped(`app.${token(change.environment.appId)}.environments`);
    case "key.rotate":
      return scoped(`env.${token(change.environmentId)}.keys`);
    case "feature.put":
    case "feature.archive":
      return scoped(`app.${token(change.appId)}.feature.${token(change.featureKey)}`);
    case "rules.put":
      return scoped(`env.${token(change.environmentId)}.feature.${token(change.featureKey)}`);
    case "stage.create":
    case "stage.update":
    case "stage.delete":
      return scoped(`app.${token(change.appId)}.stages`);
    // A segment change rewrites the targeting of every feature that uses it: one subject per app's segments.
    case "segment.create":
    case "segment.update":
    case "segment.delete":
      return scoped(`app.${token(change.appId)}.segments`);
    // An import plans against the whole app again when applied, so nothing it read can go stale: one subject per app.
    case "flags.import":
      return scoped(`app.${token(change.appId)}.import`);
    case "feature.stage":
      return scoped(`app.${token(change.appId)}.feature.${token(change.featureKey)}`);
    case "survey.put":
    case "survey.remove":
      return scoped(`env.${token(change.environmentId)}.feature.${token(change.featureKey)}.survey`);
    case "feature.enabled":
      return scoped(`env.${token(change.environmentId)}.feature.${token(change.featureKey)}`);
    // A write is checked against every feature's prerequisites in the environment (cycles): one subject per environment.
    case "feature.prerequisites":
      return scoped(`env.${token(change.environmentId)}.prerequisites`);
    case "feature.promote":
      return scoped(`env.${token(change.toEnvironmentId)}.feature.${token(change.featureKey)}`);
    case "policy.put":
      return scoped(`env.${token(change.environmentId)}.policy`);
    // A request's apply re-reads every version it compares, in log order: its own subject is enough.
    case "change-request.create":
    case "change-request.update":
    case "change-request.review":
    case "change-request.apply":
    case "change-request.cancel":
    case "change-request.fire":
      return scoped(`env.${token(change.environmentId)}.change-request.${token(change.requestId)}`);
    case "analytics.settings":
    case "analytics.rebuild":
      return scoped(`env.${token(change.environmentId)}.analytics`);
    // A start writes the feature's targeting; a transition re-reads its rollout and the targeting when applied.
    case "rollout.start":
      return scoped(`env.${token(change.environmentId)}.feature.${token(change.featureKey)}`);
    case "rollout.transition":
      return scoped(`env.${token(change.environmentId)}.rollout.${token(change.rolloutId)}`);
    // Members depend on each other (the last owner stays), so they share one subject.
    case "member.create":
    case "member.update":
    case "member.remove":
    case "password-reset.issue":
    case "password-reset.complete":
      return scoped("members");
    case "token.create":
    case "token.revoke":
    case "oauth-code.redeem":
      return scoped("tokens");
    case "session.create":
    case "session.revoke":
      return scoped("sessions");
    case "admin-token.rotate":
    case "admin-token.disable":
      return scoped("admin-token");
    case "webhook.create":
      return scoped(`app.${token(change.webhook.appId)}.webhook.${token(change.webhook.id)}`);
    case "webhook.update":
    case "webhook.delete":
    case "webhook.rotate-secret":
    case "webhook.test":
    case "webhook.redeliver":
      return scoped(`app.${token(change.appId)}.webhook.${token(change.webhookId)}`);
    // Decided by the applier against the lease and delivery as they are when it arrives, in log order on every node.
    case "webhook.claim":
    case "webhook.attempt":
      return { subject: `webhook.${token(change.webhookId)}.outbox`, concurrency: false };
    // Applied as a toggle on what the store holds when it arrives: nothing read beforehand can go stale.
    case "opt-in.set":
    case "backup.create":
    case "sign-in.fail":
    case "credential.touch":
    // Registrations and codes are new records under fresh ids: nothing they read can have changed meanwhile.
    case "oauth-client.register":
    case "oauth-code.issue":
      return { subject: "bookkeeping", concurrency: false };
  }
}
