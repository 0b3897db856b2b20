import { useState } from "preact/hooks";
import type { Scope } from "../scope";
import { createRequest, setEnabled, type Policy } from "../governance";
import { formValue } from "../form";
import { ErrorMessage } from "../ui";
import { Field } from "./Field";
import { ProposalFields } from "./ProposalFields";
import { FormDialog } from "./FormDialog";

/**
 * The kill switch of one feature in the selected environment (docs/API.md §15): off is off for every context, at once
 * and without asking (an emergency must not wait, not even for a dialog); the rules are kept. Back on is a targeting
 * change: where approval is required an owner may, with a reason, and an editor proposes it as a change request;
 * where `confirmChanges` is on, after a comment.
 */
export function KillSwitch({
  scope,
  featureKey,
  enabled: initiallyEnabled,
  policy,
  onChanged,
  onHeld,
  showLabel = false,
}: {
  scope: Scope;
  featureKey: string;
  enabled: boolean;
  policy: Policy | undefined;
  onChanged(enabled: boolean, message: string): void;
  /** Where the page shows why the switch stayed off (a table's row has no room for it); else shown beside the switch. */
  onHeld?(message: string): void;
  showLabel?: boolean;
}) {
  // What the service last answered, shown at once (the page's reload catches up with the same value).
  const [enabled, setShown] = useState(initiallyEnabled);
  const [asking, setAsking] = useState<"bypass" | "comment" | "propose" | undefined>();
  const [held, setHeld] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const environmentName = scope.environment.name;
  const owner = scope.member.role === "owner";
  const [heldMessage, setHeldMessage] = useState("");

  const send = async (body: Parameters<typeof setEnabled>[2]) => {
    setBusy(true);
    try {
      const answer = await setEnabled(scope.environmentId, featureKey, body);
      setShown(answer.enabled);
      setError(undefined);
      setAsking(undefined);
      onChanged(body.enabled, body.enabled ? `${featureKey} is on again in ${environmentName}: its rules decide who gets it.` : `${featureKey} is off for everyone in ${environmentName}; its rules are kept.`);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  const toggle = () => {
    setHeld(false);
    setError(undefined);
    if (enabled) return void send({ enabled: false });
    if (policy?.requireApproval && !owner) return setAsking("propose");
    if (policy?.requireApproval) return setAsking("bypass");
    if (policy?.confirmChanges) return setAsking("comment");
    void send({ enabled: true });
  };
  const propose = async (form: HTMLFormElement) => {
    setBusy(true);
    try {
      const description = formValue(form, "description").trim();
      const request = await createRequest(scope.environmentId, { title: formValue(form, "title").trim(), ...(description ? { description } : {}), changes: [{ feature: featureKey, enabled: true }] });
      setAsking(undefined);
      setError(undefined);
      const message = `${featureKey} stays off until change request “${request.title}” is approved and applied (see Change requests).`;
      if (onHeld) onHeld(message);
      else (setHeldMessage(message), setHeld(true));
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  const submit = (form: HTMLFormElement) => {
    if (asking === "propose") return void propose(form);
    const comment = formValue(form, "comment").trim();
    if (asking === "bypass") void send({ enabled: true, bypass: true, reason: formValue(form, "reason").trim(), ...(comment ? { comment } : {}) });
    else void send({ enabled: true, comment });
  };
  const label = `${featureKey} served in ${environmentName}`;
  return (
    <div class="kill-switch">
      <button type="button" role="switch" class={`switch ${enabled ? "switch-on" : "switch-off"}`} aria-checked={enabled} aria-label={showLabel ? undefined : label} disabled={!scope.canWrite || busy} onClick={toggle}>
        <span class="switch-track" aria-hidden="true">
          <span class="switch-thumb" />
        </span>
        {/* The state is the switch's own (aria-checked): the name stays the same when it flips. */}
        <span class="switch-text">{showLabel ? `Served in ${environmentName}` : enabled ? "On" : "Off"}</span>
        {showLabel && (
          <span class="switch-state" aria-hidden="true">
            {enabled ? "on" : "off"}
          </span>
        )}
      </button>
      {held && (
        <p class="warning" role="status">
          {heldMessage}
        </p>
      )}
      {!asking && <ErrorMessage error={error} />}
      {asking && (
        <FormDialog
          title={asking === "propose" ? `Propose switching ${featureKey} back on in ${environmentName}` : `Switch ${featureKey} back on in ${environmentName}?`}
          intro={
            <p>
              {asking === "propose"
                ? `${environmentName} requires approval for this: nothing changes now. A change request asks another member to approve; once applied, its rules decide again who gets it.`
                : asking === "bypass"
                  ? `${environmentName} requires approval for this. As an owner you may switch it on now; the audit log keeps your reason.`
                  : `Its rules decide again who gets it. ${environmentName} asks for a comment with every change.`}
            </p>
          }
          submit={asking === "propose" ? "Propose change request" : asking === "bypass" ? "Switch on, bypassing approval" : "Switch on"}
          danger={asking === "bypass"}
          busy={busy}
          onSubmit={submit}
          onCancel={() => (setAsking(undefined), setError(undefined))}
        >
          {asking === "propose" ? (
            <ProposalFields defaultTitle={`Switch ${featureKey} back on`} />
          ) : (
            <>
              {asking === "bypass" && <Field label="Reason (required)" name="reason" required maxLength={500} autoFocus />}
              <Field label={asking === "bypass" ? "Comment (optional)" : "Comment (required)"}>
                <textarea name="comment" rows={2} maxLength={500} required={asking === "comment"} autoFocus={asking === "comment"} />
              </Field>
            </>
          )}
          <ErrorMessage error={error} />
        </FormDialog>
      )}
    </div>
  );
}
