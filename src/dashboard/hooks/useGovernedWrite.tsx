import { useState } from "preact/hooks";
import { api, enc } from "../api";
import { FormDialog } from "../components/FormDialog";
import { Field } from "../components/Field";
import { ProposalFields } from "../components/ProposalFields";
import { formValue } from "../form";
import { createRequest, isoFromLocal, type ChangeRequest, type Policy } from "../governance";
import type { Scope } from "../scope";
import { ErrorMessage } from "../ui";

/** A targeting or config write of one feature, as the feature page would save it directly. */
export interface WriteSpec {
  kind: "targeting" | "config";
  featureKey: string;
  body: { rules: unknown[] } | { variants: unknown[] };
  /** What the save does, in words ("Revert targeting to version 2"): the dialog's title and the request's default title. */
  summary: string;
}

export type WriteOutcome = { kind: "saved"; version: number } | { kind: "proposed"; request: ChangeRequest };

/** What an editor of one of a feature's lists (targeting, config) gets from its page: the list, and the governed save. */
export interface GovernedEditorProps<Initial> {
  featureKey: string;
  environmentName: string;
  initial: Initial;
  canWrite: boolean;
  approvalRequired: boolean;
  /** The policy's dialog is open: the save waits for it, but is not busy yet. */
  asking: boolean;
  write(spec: WriteSpec): Promise<WriteOutcome | undefined>;
  onSaved(outcome: WriteOutcome, savedMessage: (version: number) => string): void;
}

type Mode = "confirm" | "propose";

/**
 * Every targeting or config save of the feature page goes through here, so the environment's policy (docs/API.md §15)
 * decides what a save is: where approval is required, a change request (title, description, an optional time), or an
 * owner's direct write with a reason; where `confirmChanges` is on, a direct write after a confirmation with a
 * comment; otherwise a direct write. Resolves undefined when the person cancels.
 */
export function useGovernedWrite(scope: Scope, policy: Policy | undefined): { dialog: preact.JSX.Element | null; asking: boolean; write(spec: WriteSpec): Promise<WriteOutcome | undefined> } {
  const [pending, setPending] = useState<{ mode: Mode; spec: WriteSpec; resolve(outcome: WriteOutcome | undefined): void } | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [bypass, setBypass] = useState(false);
  const environmentName = scope.environment.name;

  const direct = async (spec: WriteSpec, notes: { comment?: string; bypass?: boolean; reason?: string } = {}): Promise<WriteOutcome> => {
    const path = `/admin/environments/${enc(scope.environmentId)}/features/${enc(spec.featureKey)}/${spec.kind}`;
    const answer = await api<{ targeting?: { version: number }; config?: { version: number } }>("PUT", path, { ...spec.body, ...notes });
    return { kind: "saved", version: (answer.targeting ?? answer.config)!.version };
  };

  const write = (spec: WriteSpec): Promise<WriteOutcome | undefined> => {
    const mode: Mode | undefined = policy?.requireApproval ? "propose" : policy?.confirmChanges ? "confirm" : undefined;
    if (!mode) return direct(spec);
    setError(undefined);
    setBypass(false);
    return new Promise((resolve) => setPending({ mode, spec, resolve }));
  };

  const close = (outcome: WriteOutcome | undefined) => {
    pending?.resolve(outcome);
    setPending(undefined);
  };

  const submit = async (form: HTMLFormElement) => {
    if (!pending) return;
    const field = (name: string) => formValue(form, name).trim();
    setBusy(true);
    try {
      const { spec } = pending;
      let outcome: WriteOutcome;
      if (pending.mode === "confirm") outcome = await direct(spec, { comment: field("comment") });
      else if (bypass) outcome = await direct(spec, { bypass: true, reason: field("reason"), ...(field("comment") ? { comment: field("comment") } : {}) });
      else {
        const scheduledAt = isoFromLocal(field("scheduledAt"));
        const change = { feature: spec.featureKey, [spec.kind]: spec.body };
        const request = await createRequest(scope.environmentId, {
          title: field("title"),
          ...(field("description") ? { description: field("description") } : {}),
          ...(scheduledAt ? { scheduledAt } : {}),
          changes: [change],
        });
        outcome = { kind: "proposed", request };
      }
      close(outcome);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  let dialog: preact.JSX.Element | null = null;
  if (pending?.mode === "confirm") {
    dialog = (
      <FormDialog
        title={`${pending.spec.summary} in ${environmentName}?`}
        intro={<p>{environmentName} asks for a confirmation before every change: say what this change is for. The comment stays in the feature's history and the audit log.</p>}
        submit={`Save to ${environmentName}`}
        busy={busy}
        onSubmit={submit}
        onCancel={() => close(undefined)}
      >
        <Field label="Comment (required)">
          <textarea name="comment" rows={3} required maxLength={500} autoFocus />
        </Field>
        <ErrorMessage error={error} />
      </FormDialog>
    );
  } else if (pending?.mode === "propose") {
    const approvals = policy!.minApprovals === 1 ? "one approval" : `${policy!.minApprovals} approvals`;
    const isOwner = scope.member.role === "owner";
    dialog = (
      <FormDialog
        title={bypass ? `${pending.spec.summary} now, without approval` : "Propose a change request"}
        intro={
          <p>
            Changes in {environmentName} need {approvals}: nothing changes now. This opens a change request that another member reviews; once approved it is applied
            by hand or at the time you set.
          </p>
        }
        submit={bypass ? "Save now, bypassing approval" : "Propose change request"}
        danger={bypass}
        busy={busy}
        onSubmit={submit}
        onCancel={() => close(undefined)}
      >
        {!bypass && (
          <>
            <ProposalFields defaultTitle={pending.spec.summary} />
            <Field label="Apply at (optional, your local time)" name="scheduledAt" type="datetime-local" />
          </>
        )}
        {isOwner && (
          <label class="check">
            <input type="checkbox" checked={bypass} onChange={(event) => setBypass((event.currentTarget as HTMLInputElement).checked)} />
            As an owner, save now without approval (the audit log keeps the reason)
          </label>
        )}
        {bypass && (
          <>
            <Field label="Reason (required)" name="reason" required maxLength={500} />
            <Field label="Comment (optional)" name="comment" maxLength={500} />
          </>
        )}
        <ErrorMessage error={error} />
      </FormDialog>
    );
  }
  return { dialog, asking: pending !== undefined, write };
}
