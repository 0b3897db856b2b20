import { useState } from "preact/hooks";
import type { Scope } from "../scope";
import { formChecked, formValue } from "../form";
import { loadPolicy, savePolicy, type Policy } from "../governance";
import { useAction } from "../hooks/useAction";
import { ErrorMessage, Page, useLoad } from "../ui";
import { policySentence } from "./ChangeRequests";

/** An environment's settings: its approval policy (docs/API.md §15), which owners change and everyone reads. */
export function EnvironmentSettings({ scope }: { scope: Scope }) {
  const { environmentId, environment, member } = scope;
  const policy = useLoad(() => loadPolicy(environmentId), [environmentId]);
  // Kept here: a save reloads the policy, and the form starts afresh on it.
  const [saved, setSaved] = useState<string | undefined>();
  return (
    <Page title="Environment settings" subtitle={`${environment.name} of ${scope.app.name}`}>
      <ErrorMessage error={policy.error} />
      <div aria-live="polite" class="notice-slot">
        {saved && <p class="success">{saved}</p>}
      </div>
      {policy.data && (
        <PolicyForm key={`${environmentId}:${JSON.stringify(policy.data)}`} scope={scope} policy={policy.data} isOwner={member.role === "owner"} onSaved={(message) => (setSaved(message), policy.reload())} />
      )}
    </Page>
  );
}

function PolicyForm({ scope, policy, isOwner, onSaved }: { scope: Scope; policy: Policy; isOwner: boolean; onSaved(message: string): void }) {
  const saving = useAction();
  const [requireApproval, setRequireApproval] = useState(policy.requireApproval);
  const name = scope.environment.name;
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    await saving.run(async () => {
      const next = await savePolicy(scope.environmentId, {
        requireApproval: formChecked(form, "requireApproval"),
        minApprovals: Number(formValue(form, "minApprovals")),
        allowSelfApproval: formChecked(form, "allowSelfApproval"),
        confirmChanges: formChecked(form, "confirmChanges"),
      });
      onSaved(`Saved. ${policySentence(name, next)}`);
    });
  };
  return (
    <form class="card stack policy-form" aria-labelledby="policy-title" onSubmit={submit}>
      <h2 id="policy-title">Approval policy</h2>
      <p class="muted">{policySentence(name, policy)}</p>
      {!isOwner && <p class="notice">Only owners change the policy; you can read it.</p>}
      <fieldset disabled={!isOwner} class="plain">
        <legend class="visually-hidden">Approval policy of {name}</legend>
        <label class="check">
          <input type="checkbox" name="requireApproval" checked={requireApproval} onChange={(event) => setRequireApproval((event.currentTarget as HTMLInputElement).checked)} />
          Require approval: targeting and config changes become change requests that another member reviews
        </label>
        <label>
          Approvals needed (1–5)
          <input type="number" name="minApprovals" min={1} max={5} required defaultValue={String(policy.minApprovals)} disabled={!requireApproval} class="narrow" />
        </label>
        <label class="check">
          <input type="checkbox" name="allowSelfApproval" defaultChecked={policy.allowSelfApproval} disabled={!requireApproval} />
          Let authors approve their own requests
        </label>
        <label class="check">
          <input type="checkbox" name="confirmChanges" defaultChecked={policy.confirmChanges} />
          Ask for a confirmation and a comment before saving a change here
        </label>
      </fieldset>
      <ErrorMessage error={saving.error} />
      {isOwner && (
        <div class="actions">
          <button type="submit" disabled={saving.busy}>
            {saving.busy ? "Saving…" : "Save policy"}
          </button>
        </div>
      )}
    </form>
  );
}
