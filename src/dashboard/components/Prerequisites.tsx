import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { ApiError } from "../api";
import { formValue } from "../form";
import { createRequest, type Policy } from "../governance";
import { savePrerequisites, type Prerequisite, type WriteNotes } from "../release";
import type { Scope } from "../scope";
import { ErrorMessage } from "../ui";
import { Card } from "./Card";
import { Field } from "./Field";
import { ProposalFields } from "./ProposalFields";
import "./release.css";
import { FormDialog } from "./FormDialog";

/** A feature of this environment as the list answers it: enough to pick a prerequisite and find who depends on whom. */
export interface ListedFeature {
  key: string;
  name: string;
  prerequisites?: Prerequisite[];
}

const needs = (prerequisite: Prerequisite) => (prerequisite.enabled ? "must be on" : "must be off");

/**
 * A feature's prerequisites in one environment (docs/API.md §15): the features that must be on (or off) for the same
 * context before this one is. Edited as a list, saved in one write that the environment's policy governs: where
 * approval is required an editor proposes them as a change request and an owner may save at once, with a reason;
 * where confirmation is on, with a comment. The service refuses a cycle and names it; that message is shown as is.
 * Below the list: the features of this environment that depend on this one.
 */
export function Prerequisites({
  scope,
  featureKey,
  saved,
  features,
  policy,
  onSaved,
}: {
  scope: Scope;
  featureKey: string;
  saved: Prerequisite[];
  features: ListedFeature[] | undefined;
  policy: Policy | undefined;
  onSaved(message: ComponentChildren): void;
}) {
  const { canWrite, environment } = scope;
  const [draft, setDraft] = useState<Prerequisite[]>(saved);
  const [picked, setPicked] = useState("");
  const [mustBe, setMustBe] = useState("on");
  const [asking, setAsking] = useState<"confirm" | "bypass" | "propose" | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const dirty = JSON.stringify(draft) !== JSON.stringify(saved);
  const isOwner = scope.member.role === "owner";
  const held = policy?.requireApproval === true;
  // Where approval is required an editor's save proposes the list as a change request; an owner may bypass.
  const editable = canWrite;
  const proposes = held && !isOwner;
  const candidates = (features ?? []).filter((feature) => feature.key !== featureKey && !draft.some((each) => each.feature === feature.key));
  const dependents = (features ?? []).flatMap((feature) => {
    const link = feature.prerequisites?.find((each) => each.feature === featureKey);
    return link ? [{ key: feature.key, link }] : [];
  });
  const issues = error instanceof ApiError ? error.validationErrors : [];
  const issueAt = (index: number) => {
    const paths = [`prerequisites.${index}.feature`, `prerequisites.${index}`, `changes.0.prerequisites.${index}.feature`, `changes.0.prerequisites.${index}`];
    const message = issues.find((issue) => paths.includes(issue.path))?.message;
    return message && message !== (error as ApiError).message ? message : undefined;
  };

  const write = async (notes: WriteNotes) => {
    setBusy(true);
    try {
      const answer = await savePrerequisites(scope.environmentId, featureKey, draft, notes);
      setError(undefined);
      setAsking(undefined);
      onSaved(answer.changed ? `Prerequisites saved in ${environment.name} (version ${answer.version}).` : "The prerequisites were already these: nothing changed.");
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  const propose = async (title: string, description: string) => {
    setBusy(true);
    try {
      const request = await createRequest(scope.environmentId, { title, ...(description ? { description } : {}), changes: [{ feature: featureKey, prerequisites: draft }] });
      setError(undefined);
      setAsking(undefined);
      setDraft(saved);
      onSaved(`Proposed as change request “${request.title}”: the prerequisites stay as they are until it is approved and applied (see Change requests).`);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  const save = () => {
    setError(undefined);
    if (proposes) return setAsking("propose");
    if (held) return setAsking("bypass");
    if (policy?.confirmChanges) return setAsking("confirm");
    void write({});
  };
  const submitDialog = (form: HTMLFormElement) => {
    const field = (name: string) => (form.elements.namedItem(name) ? formValue(form, name).trim() : "");
    if (asking === "propose") return void propose(field("title"), field("description"));
    const comment = field("comment");
    void write(asking === "bypass" ? { bypass: true, reason: field("reason"), ...(comment ? { comment } : {}) } : { comment });
  };
  const add = () => {
    if (!picked) return;
    setDraft([...draft, { feature: picked, enabled: mustBe === "on" }]);
    setPicked("");
    setError(undefined);
  };

  return (
    <Card id="prerequisites-title" title="Prerequisites">
      <p class="muted small">
        {featureKey} is on in {environment.name} only for someone for whom each of these is on (or off) too.
      </p>
      {draft.length === 0 ? (
        <p class="empty-inline">None: {featureKey} depends on no other feature here.</p>
      ) : (
        <ul class="prerequisite-list">
          {draft.map((prerequisite, index) => (
            <li>
              <a href={scope.link("features", prerequisite.feature)}>{prerequisite.feature}</a> <span>{needs(prerequisite)}</span>
              {editable && (
                <button type="button" class="link" aria-label={`Remove prerequisite ${prerequisite.feature}`} onClick={() => (setDraft(draft.filter((_, at) => at !== index)), setError(undefined))}>
                  Remove
                </button>
              )}
              {issueAt(index) && <span class="field-error">{issueAt(index)}</span>}
            </li>
          ))}
        </ul>
      )}
      {editable && (
        <div class="prerequisite-add">
          <Field label="Feature">
            <select value={picked} onChange={(event) => setPicked((event.currentTarget as HTMLSelectElement).value)}>
              <option value="">Pick a feature…</option>
              {candidates.map((feature) => (
                <option value={feature.key}>{feature.name && feature.name !== feature.key ? `${feature.name} (${feature.key})` : feature.key}</option>
              ))}
            </select>
          </Field>
          <Field label="Condition">
            <select value={mustBe} onChange={(event) => setMustBe((event.currentTarget as HTMLSelectElement).value)}>
              <option value="on">must be on</option>
              <option value="off">must be off</option>
            </select>
          </Field>
          <button type="button" class="secondary" disabled={!picked} onClick={add}>
            Add prerequisite
          </button>
        </div>
      )}
      {!asking && <ErrorMessage error={error} issues={false} />}
      {proposes && <p class="notice small">{environment.name} requires approval: saving proposes these prerequisites as a change request.</p>}
      {editable && dirty && (
        <div class="actions">
          <button type="button" onClick={save} disabled={busy}>
            {busy ? "Saving…" : proposes ? "Propose prerequisites" : "Save prerequisites"}
          </button>
          <button type="button" class="secondary" onClick={() => (setDraft(saved), setError(undefined))}>
            Discard
          </button>
        </div>
      )}
      {dependents.length > 0 && (
        <p class="small">
          <span class="muted">Depend on {featureKey} here: </span>
          {dependents.map(({ key, link }, index) => (
            <>
              {index > 0 && ", "}
              <a href={scope.link("features", key)}>{key}</a> <span class="muted">({needs(link).replace("must be", "needs it")})</span>
            </>
          ))}
        </p>
      )}
      {asking && (
        <FormDialog
          title={
            asking === "propose"
              ? `Propose ${featureKey}'s prerequisites in ${environment.name}`
              : asking === "bypass"
                ? `Save ${featureKey}'s prerequisites now, without approval?`
                : `Save ${featureKey}'s prerequisites in ${environment.name}?`
          }
          intro={
            <p>
              {asking === "propose"
                ? `${environment.name} requires approval: nothing changes now. Another member approves the request; once applied, these are ${featureKey}'s prerequisites.`
                : asking === "bypass"
                ? `${environment.name} requires approval; as an owner you may save directly. The audit log keeps your reason.`
                : `${environment.name} asks for a confirmation before every change: say what this change is for.`}
            </p>
          }
          submit={asking === "propose" ? "Propose change request" : asking === "bypass" ? "Save, bypassing approval" : `Save to ${environment.name}`}
          danger={asking === "bypass"}
          busy={busy}
          onSubmit={submitDialog}
          onCancel={() => setAsking(undefined)}
        >
          {asking === "propose" ? (
            <ProposalFields defaultTitle={`Prerequisites of ${featureKey}`} />
          ) : (
            <>
              {asking === "bypass" && <Field label="Reason (required)" name="reason" required maxLength={500} autoFocus />}
              <Field label={asking === "bypass" ? "Comment (optional)" : "Comment (required)"}>
                <textarea name="comment" rows={2} maxLength={500} required={asking === "confirm"} autoFocus={asking === "confirm"} />
              </Field>
            </>
          )}
          <ErrorMessage error={error} issues={false} />
        </FormDialog>
      )}
    </Card>
  );
}
