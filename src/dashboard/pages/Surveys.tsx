/**
 * Feedback surveys of one environment (docs/API.md "Automated feedback surveys"): which feature asks what and when,
 * how many prompts were shown, dismissed and answered, and the answers. A survey is set per feature; saving one
 * for a feature that has one replaces it.
 */
import { useState } from "preact/hooks";
import type { Scope } from "../scope";
import { api, ApiError, enc, get, type EnvironmentFeature } from "../api";
import { ACTIONS, DataTable } from "../components/DataTable";
import { Card } from "../components/Card";
import { EntityLink } from "../components/EntityLink";
import { FeedbackList, loadFeedback } from "../components/FeedbackList";
import { Field } from "../components/Field";
import { useConfirm } from "../components/ConfirmDialog";
import { useAction } from "../hooks/useAction";
import { loadNewest, PROMPT_EVENTS_LOG } from "../log-tail";
import { ErrorMessage, Page, useLoad } from "../ui";

export interface Survey {
  featureKey: string;
  question: string;
  enabled: boolean;
  afterUses: number | null;
  afterDays: number | null;
  quietPeriodDays: number;
  updatedAt: string;
}

interface PromptEvent {
  action: "received" | "shown" | "dismissed";
  featureId: string;
  promptId: string;
}

export interface PromptFigures {
  shown: number;
  dismissed: number;
  answered: number;
}

/** Prompts per feature id: distinct prompts shown and dismissed, and distinct prompts answered by a feedback. */
export function promptFigures(events: PromptEvent[], feedback: { featureId?: string; promptId?: string | null }[]): Map<string, PromptFigures> {
  const sets = new Map<string, { shown: Set<string>; dismissed: Set<string>; answered: Set<string> }>();
  const of = (featureId: string) => sets.get(featureId) ?? sets.set(featureId, { shown: new Set(), dismissed: new Set(), answered: new Set() }).get(featureId)!;
  for (const event of events) if (event.action === "shown" || event.action === "dismissed") of(event.featureId)[event.action].add(event.promptId);
  for (const entry of feedback) if (entry.promptId && entry.featureId) of(entry.featureId).answered.add(entry.promptId);
  return new Map([...sets].map(([featureId, each]) => [featureId, { shown: each.shown.size, dismissed: each.dismissed.size, answered: each.answered.size }]));
}

const askedWhen = (survey: Survey) =>
  [survey.afterUses !== null && `after ${survey.afterUses} ${survey.afterUses === 1 ? "use" : "uses"}`, survey.afterDays !== null && `${survey.afterDays} days after first use`]
    .filter(Boolean)
    .join(" or ");

export function Surveys({ scope }: { scope: Scope }) {
  const base = `/admin/environments/${enc(scope.environmentId)}`;
  const surveys = useLoad(() => get<{ surveys: Survey[] }>(`${base}/surveys`).then((answer) => answer.surveys), [base]);
  const features = useLoad(() => get<{ features: EnvironmentFeature[] }>(`${base}/features`).then((answer) => answer.features), [base]);
  const activity = useLoad(
    () => Promise.all([loadNewest<PromptEvent>(scope.environmentId, PROMPT_EVENTS_LOG), loadFeedback(scope.environmentId)]).then(([events, feedback]) => ({ events, feedback })),
    [scope.environmentId],
  );
  const [editing, setEditing] = useState<Survey | undefined>();
  const [answersOf, setAnswersOf] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const removing = useAction();
  const confirm = useConfirm();
  const idOf = new Map((features.data ?? []).map((feature) => [feature.key, feature.id]));
  const figures = activity.data ? promptFigures(activity.data.events, activity.data.feedback) : undefined;
  const figuresOf = (key: string) => figures?.get(idOf.get(key) ?? "") ?? { shown: 0, dismissed: 0, answered: 0 };
  const remove = async (survey: Survey) => {
    const confirmed = await confirm.ask({ title: `Remove the survey of ${survey.featureKey}?`, message: "No one is asked its question any more; the answers given stay.", confirm: "Remove survey", danger: true });
    if (!confirmed) return;
    await removing.run(async () => {
      await api("DELETE", `${base}/features/${enc(survey.featureKey)}/survey`);
      setNotice(`The survey of ${survey.featureKey} is removed.`);
      surveys.reload();
    });
  };
  const answers = (activity.data?.feedback ?? []).filter((entry) => entry.key === answersOf && entry.promptId);
  return (
    <Page title="Feedback surveys" subtitle={`Questions the browser SDKs ask users of ${scope.environment.name} after they used a feature; at most once per survey and user.`}>
      {confirm.dialog}
      <ErrorMessage error={surveys.error ?? features.error ?? activity.error ?? removing.error} />
      <div aria-live="polite" class="notice-slot">
        {notice && <p class="success">{notice}</p>}
      </div>
      <DataTable
        columns={["Feature", "Question", "Asked", "State", "Shown", "Dismissed", "Answered", ACTIONS]}
        rows={surveys.data}
        row={(survey) => {
          const counts = figuresOf(survey.featureKey);
          return (
            <>
              <th scope="row">
                <EntityLink kind="features" id={survey.featureKey} />
              </th>
              <td>{survey.question}</td>
              <td>
                {askedWhen(survey)}
                <div class="muted small">not within {survey.quietPeriodDays} days of a user's last prompt</div>
              </td>
              <td>{survey.enabled ? "on" : "paused"}</td>
              <td>{counts.shown}</td>
              <td>{counts.dismissed}</td>
              <td>{counts.answered}</td>
              <td>
                <div class="row-actions">
                  <button type="button" class="link" aria-pressed={answersOf === survey.featureKey} onClick={() => setAnswersOf(answersOf === survey.featureKey ? undefined : survey.featureKey)}>
                    Answers to {survey.featureKey}
                  </button>
                  {scope.canWrite && (
                    <>
                      <button type="button" class="link" onClick={() => (setEditing(survey), requestAnimationFrame(() => document.getElementById("survey-form-title")?.scrollIntoView()))}>
                        Edit survey of {survey.featureKey}
                      </button>
                      <button type="button" class="link danger" disabled={removing.busy} onClick={() => void remove(survey)}>
                        Remove survey of {survey.featureKey}
                      </button>
                    </>
                  )}
                </div>
              </td>
            </>
          );
        }}
        empty={
          <div class="empty">
            <p>
              <strong>No surveys in {scope.environment.name}.</strong> Set one up below: users who used a feature are asked its question in the app.
            </p>
          </div>
        }
      />
      {answersOf && (
        <Card id="survey-answers-title" title={`Answers to the survey of ${answersOf}`}>
          {answers.length === 0 ? <p class="muted">No answers yet.</p> : <FeedbackList entries={answers} />}
        </Card>
      )}
      {scope.canWrite && features.data && (
        <SurveyForm
          key={editing?.featureKey ?? "new"}
          base={base}
          features={features.data.map((feature) => feature.key)}
          existing={surveys.data ?? []}
          initial={editing}
          onSaved={(survey) => (setNotice(`The survey of ${survey.featureKey} is saved.`), setEditing(undefined), surveys.reload())}
        />
      )}
    </Page>
  );
}

/** Number fields: blank is "not set". */
const numberOrNull = (text: string) => (text.trim() === "" ? null : Number(text));

function SurveyForm({ base, features, existing, initial, onSaved }: { base: string; features: string[]; existing: Survey[]; initial: Survey | undefined; onSaved(survey: Survey): void }) {
  const [featureKey, setFeatureKey] = useState(initial?.featureKey ?? features[0] ?? "");
  const [question, setQuestion] = useState(initial?.question ?? "How do you like it?");
  const [afterUses, setAfterUses] = useState(initial ? String(initial.afterUses ?? "") : "3");
  const [afterDays, setAfterDays] = useState(initial ? String(initial.afterDays ?? "") : "");
  const [quiet, setQuiet] = useState(String(initial?.quietPeriodDays ?? 7));
  const [enabled, setEnabled] = useState(initial?.enabled ?? true);
  const saving = useAction();
  const issues = saving.error instanceof ApiError ? saving.error.validationErrors : [];
  const issueAt = (path: string) => issues.find((issue) => issue.path === path)?.message;
  const replaces = existing.some((survey) => survey.featureKey === featureKey);
  const submit = (event: Event) => {
    event.preventDefault();
    void saving.run(async () => {
      const body = {
        question: question.trim(),
        ...(numberOrNull(afterUses) !== null ? { afterUses: numberOrNull(afterUses) } : {}),
        ...(numberOrNull(afterDays) !== null ? { afterDays: numberOrNull(afterDays) } : {}),
        quietPeriodDays: numberOrNull(quiet) ?? 7,
        enabled,
      };
      const { survey } = await api<{ survey: Survey }>("PUT", `${base}/features/${enc(featureKey)}/survey`, body);
      onSaved(survey);
    });
  };
  return (
    <Card id="survey-form-title" title={initial ? `Edit the survey of ${initial.featureKey}` : "Set up a survey"}>
      <form onSubmit={submit} aria-label={initial ? `Edit the survey of ${initial.featureKey}` : "Set up a survey"}>
        <div class="row">
          <Field label="Feature">
            <select value={featureKey} disabled={initial !== undefined} onChange={(event) => setFeatureKey((event.currentTarget as HTMLSelectElement).value)}>
              {features.map((key) => (
                <option value={key}>{key}</option>
              ))}
            </select>
          </Field>
          <Field label="Question" required maxLength={256} value={question} error={issueAt("question")} onInput={(event) => setQuestion((event.currentTarget as HTMLInputElement).value)} />
        </div>
        <div class="row">
          <Field label="Ask after this many uses" type="number" min={1} value={afterUses} error={issueAt("afterUses")} onInput={(event) => setAfterUses((event.currentTarget as HTMLInputElement).value)} />
          <Field label="or this many days after first use" type="number" min={0} value={afterDays} error={issueAt("afterDays")} onInput={(event) => setAfterDays((event.currentTarget as HTMLInputElement).value)} />
          <Field label="Quiet period (days)" type="number" min={0} value={quiet} error={issueAt("quietPeriodDays")} onInput={(event) => setQuiet((event.currentTarget as HTMLInputElement).value)} />
        </div>
        <label class="check">
          <input type="checkbox" checked={enabled} onChange={(event) => setEnabled((event.currentTarget as HTMLInputElement).checked)} />
          Asking (untick to pause it)
        </label>
        {!initial && replaces && <p class="warning">{featureKey} has a survey: saving replaces it.</p>}
        <ErrorMessage error={saving.error} issues={issues.some((issue) => !["question", "afterUses", "afterDays", "quietPeriodDays"].includes(issue.path))} />
        <div class="actions">
          <button type="submit" disabled={saving.busy || featureKey === ""}>
            {saving.busy ? "Saving…" : "Save survey"}
          </button>
        </div>
      </form>
    </Card>
  );
}
