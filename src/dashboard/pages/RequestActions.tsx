import { useState } from "preact/hooks";
import type { Scope } from "../scope";
import { Field } from "../components/Field";
import { FormDialog } from "../components/FormDialog";
import { formChecked, formValue } from "../form";
import { isAuthor, isoFromLocal, requestAction, type ChangeRequest, type Policy } from "../governance";
import { ErrorMessage } from "../ui";

type Action = "approve" | "reject" | "apply" | "schedule" | "edit" | "cancel";

const DONE: Record<Action, (request: ChangeRequest) => string> = {
  approve: (request) => (request.state === "approved" ? "Approved: it is ready to apply." : request.state === "scheduled" ? "Approved: it applies at its time." : "Approval recorded: it needs more."),
  reject: () => "Rejected: its author may edit it and ask again.",
  apply: () => "Applied: the features' rules are changed.",
  schedule: (request) => (request.scheduledAt ? "Schedule set: it needs approval again for this revision." : "Schedule removed: it applies by hand."),
  edit: () => "Saved as a new revision: earlier approvals no longer count.",
  cancel: () => "Cancelled.",
};

/** `datetime-local`'s value for an ISO time, in the person's own clock. */
function localValue(iso: string | null): string {
  if (!iso) return "";
  const date = new Date(iso);
  const pad = (value: number) => String(value).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/**
 * What this member may do with the request, as buttons, and why not where they may not (docs/API.md §15): editors and
 * owners review and apply; the author reviews only where the policy allows self-approval; the author or an owner
 * edits, schedules and cancels; viewers read.
 */
export function RequestActions({ scope, request, policy, onChanged }: { scope: Scope; request: ChangeRequest; policy: Policy; onChanged(next: ChangeRequest, message: string): void }) {
  const { member, environmentId, environment } = scope;
  const [open, setOpen] = useState<Action | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const author = isAuthor(request, member);
  const owner = member.role === "owner";
  const writer = scope.canWrite;
  const reviewed = request.reviews.some((review) => review.reviewerId === member.id && review.revision === request.revision);
  const mayReview = writer && request.state === "open" && (!author || policy.allowSelfApproval) && !reviewed;
  const mayApply = writer && (request.state === "approved" || (request.state === "open" && !policy.requireApproval));
  const mayManage = writer && (author || owner);
  const mayEdit = mayManage && request.state !== "applied";
  const maySchedule = mayManage && (request.state === "open" || request.state === "approved" || request.state === "scheduled");
  const mayCancel = mayManage && ["open", "approved", "rejected", "scheduled"].includes(request.state);

  const run = async (action: Action, form: HTMLFormElement) => {
    const value = (name: string) => formValue(form, name).trim();
    const comment = form.elements.namedItem("comment") ? value("comment") : "";
    setBusy(true);
    try {
      let next: ChangeRequest;
      if (action === "approve" || action === "reject") next = await requestAction(environmentId, request.id, "reviews", { decision: action, revision: request.revision, ...(comment ? { comment } : {}) });
      else if (action === "apply" || action === "cancel") next = await requestAction(environmentId, request.id, action, comment ? { comment } : {});
      else if (action === "schedule") next = await requestAction(environmentId, request.id, "edit", { scheduledAt: formChecked(form, "byHand") ? null : (isoFromLocal(value("scheduledAt")) ?? null) });
      else {
        const rebase = formChecked(form, "rebase");
        next = await requestAction(environmentId, request.id, "edit", {
          title: value("title"),
          description: value("description") || null,
          // The same changes again, now based on the features' current versions (what a conflict asks for).
          ...(rebase ? { changes: request.changes.map(({ feature, targeting, config }) => ({ feature, ...(targeting ? { targeting } : {}), ...(config ? { config } : {}) })) } : {}),
        });
      }
      setOpen(undefined);
      setError(undefined);
      onChanged(next, DONE[action](next));
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  const dialog = (action: Action, title: string, intro: string, submit: string, fields: preact.JSX.Element | null, danger = false) =>
    open === action && (
      <FormDialog title={title} intro={<p>{intro}</p>} submit={submit} danger={danger} busy={busy} onSubmit={(form) => run(action, form)} onCancel={() => (setOpen(undefined), setError(undefined))}>
        {fields}
        <ErrorMessage error={error} />
      </FormDialog>
    );
  const comment = (label: string, required = false) => (
    <Field label={label}>
      <textarea name="comment" rows={3} maxLength={500} required={required} autoFocus />
    </Field>
  );
  const button = (action: Action, label: string, secondary = true) => (
    <button type="button" class={secondary ? "secondary" : undefined} onClick={() => (setError(undefined), setOpen(action))}>
      {label}
    </button>
  );

  const why: string[] = [];
  if (!writer) why.push("Viewers read change requests; editors and owners review and apply them.");
  else if (request.state === "open" && author && !policy.allowSelfApproval) why.push(`You wrote this request: another member approves it (${environment.name} does not allow self-approval).`);
  else if (request.state === "open" && reviewed) why.push(`You reviewed revision ${request.revision}; an edit would ask again.`);
  if (writer && !author && !owner && request.state !== "applied") why.push("Its author or an owner edits, schedules or cancels it.");

  const anything = mayReview || mayApply || mayEdit || maySchedule || mayCancel;
  return (
    <section class="card" aria-labelledby="request-actions">
      <h2 id="request-actions">Review and apply</h2>
      {anything && (
        <div class="actions">
          {mayReview && button("approve", "Approve", false)}
          {mayReview && button("reject", "Reject")}
          {mayApply && button("apply", `Apply to ${environment.name}`, false)}
          {maySchedule && button("schedule", request.scheduledAt ? "Change schedule" : "Schedule")}
          {mayEdit && button("edit", "Edit")}
          {mayCancel && button("cancel", "Cancel request")}
        </div>
      )}
      {why.map((text) => (
        <p class="muted small">{text}</p>
      ))}
      {!anything && request.state === "applied" && <p class="muted small">Applied: nothing more to do. To undo it, propose the earlier rules from the feature's history.</p>}
      {dialog("approve", `Approve “${request.title}”?`, `Your approval counts for revision ${request.revision}; an edit of the request voids it.`, "Approve", comment("Comment (optional)"))}
      {dialog("reject", `Reject “${request.title}”?`, "Its author sees your reason and may edit the request and ask again.", "Reject", comment("Reason (required)", true), true)}
      {dialog("apply", `Apply “${request.title}” to ${environment.name}?`, "Every change is written at once, or none if a feature changed since the request was made.", `Apply to ${environment.name}`, comment(policy.confirmChanges ? "Comment (required)" : "Comment (optional)", policy.confirmChanges))}
      {dialog(
        "schedule",
        "When should it apply?",
        "Setting or changing the time is an edit: the request gets a new revision and needs its approvals again. Once approved, it applies at that time.",
        "Save schedule",
        <>
          <Field label="Apply at (your local time)" name="scheduledAt" type="datetime-local" defaultValue={localValue(request.scheduledAt)} autoFocus />
          <label class="check">
            <input type="checkbox" name="byHand" /> No time: apply by hand once approved
          </label>
        </>,
      )}
      {dialog(
        "edit",
        "Edit the request",
        "Saving makes a new revision: approvals given so far no longer count.",
        "Save revision",
        <>
          <Field label="Title" name="title" required maxLength={200} defaultValue={request.title} autoFocus />
          <Field label="Description">
            <textarea name="description" rows={3} maxLength={5000} defaultValue={request.description ?? ""} />
          </Field>
          <label class="check">
            <input type="checkbox" name="rebase" /> Base the changes on the features' current rules (after someone else changed them)
          </label>
        </>,
      )}
      {dialog("cancel", `Cancel “${request.title}”?`, "Nothing is applied; the request stays in the list as cancelled and can be edited back to open.", "Cancel request", null, true)}
    </section>
  );
}
