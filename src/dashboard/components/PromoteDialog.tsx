import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import type { Environment, EnvironmentFeature } from "../api";
import { formValue } from "../form";
import { loadPolicy, type RequestChange } from "../governance";
import { listDiff, promote } from "../release";
import type { Scope } from "../scope";
import { ErrorMessage, useLoad } from "../ui";
import { ChangeDiff } from "./ChangeDiff";
import { Field } from "./Field";
import { FormDialog } from "./FormDialog";
import "./release.css";

type Rules = Pick<EnvironmentFeature, "targeting" | "config">;

/**
 * What promoting would change in the target, before anything is written: the target's rules as they are now against
 * this environment's, rule by rule, as a change request's page shows a change. Config appears only where it differs.
 */
export function promotionPreview(featureKey: string, source: Rules, target: Rules): RequestChange {
  const targeting = listDiff(target.targeting.segmentRules ?? target.targeting.rules, source.targeting.segmentRules ?? source.targeting.rules);
  const config = listDiff(target.config.variants, source.config.variants);
  return {
    feature: featureKey,
    base: { targetingVersion: target.targeting.version, configVersion: target.config.version },
    diff: { targeting, ...(config.changed ? { config } : {}), current: { targetingVersion: target.targeting.version, configVersion: target.config.version } },
  };
}

/**
 * Promotes a feature's rules and config from this environment to `target` (docs/API.md §15) through the promote
 * endpoint, so the target's policy decides: a direct write, or a change request there. An owner may bypass an
 * approval with a reason; where the target asks for confirmation the comment is required.
 */
export function PromoteDialog({
  scope,
  featureKey,
  source,
  target,
  targetRules,
  segmentNames,
  onDone,
  onCancel,
}: {
  scope: Scope;
  featureKey: string;
  source: Rules;
  target: Environment;
  targetRules: Rules;
  segmentNames: ReadonlyMap<string, string>;
  onDone(message: ComponentChildren): void;
  onCancel(): void;
}) {
  const policy = useLoad(() => loadPolicy(target.id), [target.id]);
  const [bypass, setBypass] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const preview = promotionPreview(featureKey, source, targetRules);
  const same = !preview.diff.targeting!.changed && !preview.diff.config;
  const held = policy.data?.requireApproval === true && !bypass;
  const commentRequired = policy.data?.confirmChanges === true && !held;
  const from = scope.environment.name;
  const submit = async (form: HTMLFormElement) => {
    const field = (name: string) => (form.elements.namedItem(name) ? formValue(form, name).trim() : "");
    setBusy(true);
    setError(undefined);
    try {
      const answer = await promote(scope.environmentId, featureKey, {
        to: target.id,
        ...(field("title") ? { title: field("title") } : {}),
        ...(field("comment") ? { comment: field("comment") } : {}),
        ...(bypass ? { bypass: true, reason: field("reason") } : {}),
      });
      const targetLink = `#/apps/${encodeURIComponent(scope.app.id)}/environments/${encodeURIComponent(target.id)}`;
      if (answer.outcome === "change-request") {
        onDone(
          <>
            {target.name} requires approval, so nothing was written yet: the promotion is change request{" "}
            <a href={`${targetLink}/change-requests/${encodeURIComponent(answer.changeRequest.id)}`}>{answer.changeRequest.title}</a>, awaiting review there.
          </>,
        );
      } else if (answer.outcome === "unchanged") {
        onDone(`${target.name} already has ${from}'s rules and config for ${featureKey}: nothing to write.`);
      } else {
        const parts = answer.wrote.map((part) => (part === "targeting" ? `targeting (now version ${answer.targetingVersion})` : `config (now version ${answer.configVersion})`));
        onDone(
          <>
            Promoted to <a href={`${targetLink}/features/${encodeURIComponent(featureKey)}`}>{target.name}</a>: wrote its {parts.join(" and ")}.
          </>,
        );
      }
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  const approvals = policy.data && (policy.data.minApprovals === 1 ? "one approval" : `${policy.data.minApprovals} approvals`);
  return (
    <FormDialog
      title={`Promote ${featureKey} to ${target.name}?`}
      intro={
        <p>
          Copies {from}'s targeting rules and remote config of {featureKey} to {target.name}. {target.name}'s kill switch and prerequisites stay as they are.{" "}
          {policy.data?.requireApproval &&
            (bypass ? `You write ${target.name} directly, bypassing its approval: the audit log keeps your reason.` : `${target.name} needs ${approvals}: this opens a change request there; nothing changes until it is applied.`)}
        </p>
      }
      submit={same ? "Promote (nothing differs)" : held ? "Propose promotion" : bypass ? "Promote, bypassing approval" : `Promote to ${target.name}`}
      danger={bypass}
      busy={busy || policy.loading}
      onSubmit={(form) => void submit(form)}
      onCancel={onCancel}
    >
      <ErrorMessage error={policy.error} />
      <div class="promote-preview" aria-label={`What changes in ${target.name}`} role="group">
        <p class="muted small">{same ? `${target.name} already matches ${from}.` : `${target.name}'s rules now, against ${from}'s:`}</p>
        {!same && <ChangeDiff change={preview} link={`#/apps/${encodeURIComponent(scope.app.id)}/environments/${encodeURIComponent(target.id)}/features/${encodeURIComponent(featureKey)}`} segmentNames={segmentNames} settled />}
      </div>
      {held && <Field label="Request title (optional)" name="title" maxLength={200} placeholder={`Promote ${featureKey} from ${from} to ${target.name}`} />}
      {!held && (
        <Field label={commentRequired ? "Comment (required)" : "Comment (optional)"}>
          <textarea name="comment" rows={2} maxLength={500} required={commentRequired} autoFocus />
        </Field>
      )}
      {policy.data?.requireApproval && scope.member.role === "owner" && (
        <label class="check">
          <input type="checkbox" checked={bypass} onChange={(event) => setBypass((event.currentTarget as HTMLInputElement).checked)} />
          As an owner, write {target.name} now without approval (the audit log keeps the reason)
        </label>
      )}
      {bypass && <Field label="Reason (required)" name="reason" required maxLength={500} />}
      <ErrorMessage error={error} />
    </FormDialog>
  );
}
