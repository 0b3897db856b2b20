import { useState } from "preact/hooks";
import { api, ApiError, enc, get, type Feature } from "../api";
import { Card } from "../components/Card";
import { useConfirm } from "../components/ConfirmDialog";
import { Field } from "../components/Field";
import { formChecked, formValue } from "../form";
import { useAction } from "../hooks/useAction";
import type { Scope } from "../scope";
import { ErrorMessage, useLoad } from "../ui";

/** An app's release stage (docs/API.md §10) as the stage picker needs it. */
export interface ReleaseStage {
  id: string;
  name: string;
  order: number;
  targeting: Record<string, { rules: unknown[] }>;
}

export function loadStages(appId: string): Promise<ReleaseStage[]> {
  return get<{ stages: ReleaseStage[] }>(`/admin/apps/${enc(appId)}/stages`).then((answer) => [...answer.stages].sort((a, b) => a.order - b.order));
}

/** What putting a feature in a stage does to each environment's targeting, in words. */
export function stageEffect(stage: ReleaseStage, environments: Scope["app"]["environments"]): string {
  return environments
    .map((environment) => {
      const rules = stage.targeting[environment.id]?.rules ?? [];
      const everyone = rules.length === 1 && JSON.stringify(rules[0]) === JSON.stringify({ filter: { type: "constant", value: true } });
      return `${environment.name}: ${rules.length === 0 ? "no one" : everyone ? "everyone" : "the stage's rules"}`;
    })
    .join("; ");
}

/** App-level facts of a feature (all environments): its release stage, then name, description, link, opt-in, usage events. */
export function FeatureSettings({ scope, feature, canWrite, onSaved }: { scope: Scope; feature: Feature; canWrite: boolean; onSaved(message: string): void }) {
  const appId = scope.app.id;
  const saving = useAction();
  const error = saving.error;
  const issues = error instanceof ApiError ? error.validationErrors : [];
  const issueAt = (field: string) => issues.find((issue) => issue.path === field)?.message;
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const text = (name: string) => formValue(form, name).trim();
    await saving.run(async () => {
      await api("PUT", `/admin/apps/${enc(appId)}/features/${enc(feature.key)}`, {
        name: text("name") || null,
        description: text("description") || null,
        link: text("link") || null,
        optInEnabled: formChecked(form, "optInEnabled"),
        usageEvents: text("usageEvents")
          .split(",")
          .map((name) => name.trim())
          .filter(Boolean),
      });
      onSaved("Settings saved.");
    });
  };
  const field = (name: string, label: string, value: string) => <Field label={label} name={name} defaultValue={value} disabled={!canWrite} error={issueAt(name)} />;
  return (
    <Card id="settings-title" title="Settings (every environment)">
      <StagePicker scope={scope} feature={feature} canWrite={canWrite} onSaved={onSaved} />
      <FeatureSurvey scope={scope} featureKey={feature.key} />
      <form class="stack" onSubmit={submit} aria-label="Feature settings">
        {field("name", "Name", feature.name === feature.key ? "" : (feature.name ?? ""))}
        {field("description", "Description", feature.description ?? "")}
        {field("link", "Link", feature.link ?? "")}
        {field("usageEvents", "Usage events (comma-separated)", (feature.usageEvents ?? []).join(", "))}
        <label class="check">
          <input name="optInEnabled" type="checkbox" defaultChecked={feature.optInEnabled} disabled={!canWrite} /> Users and companies may opt in
        </label>
        {canWrite && (
          <div class="actions">
            <button type="submit" disabled={saving.busy}>
              {saving.busy ? "Saving…" : "Save settings"}
            </button>
          </div>
        )}
      </form>
      <ErrorMessage error={error} issues={false} />
    </Card>
  );
}

/**
 * The release stage, chosen from the app's stages (not typed): moving a feature to a stage applies that stage's
 * targeting in every environment, so the dialog says what each environment gets before it happens.
 */
function StagePicker({ scope, feature, canWrite, onSaved }: { scope: Scope; feature: Feature; canWrite: boolean; onSaved(message: string): void }) {
  const stages = useLoad(() => loadStages(scope.app.id), [scope.app.id]);
  const current = feature.stageId ?? (feature.stage ? `label:${feature.stage}` : "");
  const [chosen, setChosen] = useState(current);
  const moving = useAction();
  const confirm = useConfirm();
  const move = async (event: Event) => {
    event.preventDefault();
    if (chosen === current) return;
    const stage = stages.data?.find((each) => each.id === chosen);
    if (stage) {
      const confirmed = await confirm.ask({
        title: `Move ${feature.name || feature.key} to ${stage.name}?`,
        message: `Its targeting in every environment becomes ${stage.name}'s (${stageEffect(stage, scope.app.environments)}), each as a new version.`,
        confirm: `Move to ${stage.name}`,
      });
      if (!confirmed) return;
    }
    await moving.run(async () => {
      if (stage) await api("PUT", `/admin/apps/${enc(scope.app.id)}/features/${enc(feature.key)}/stage`, { stage: stage.id });
      else await api("PUT", `/admin/apps/${enc(scope.app.id)}/features/${enc(feature.key)}`, { stage: null });
      onSaved(stage ? `Moved to ${stage.name}.` : "Taken out of its release stage.");
    });
  };
  return (
    <form class="inline stage-picker" onSubmit={move} aria-label="Release stage">
      {confirm.dialog}
      <Field label="Release stage">
        <select name="stage" value={chosen} disabled={!canWrite || !stages.data} onChange={(event) => setChosen((event.currentTarget as HTMLSelectElement).value)}>
          <option value="">no stage</option>
          {stages.data?.map((stage) => (
            <option value={stage.id}>{stage.name}</option>
          ))}
          {current.startsWith("label:") && <option value={current}>{feature.stage} (a label, not one of the app's stages)</option>}
        </select>
      </Field>
      {canWrite && (
        <button type="submit" class="secondary" disabled={moving.busy || chosen === current || chosen.startsWith("label:")}>
          Move to stage
        </button>
      )}
      <a href={scope.link("stages")} class="small">
        Release stages of {scope.app.name}
      </a>
      <ErrorMessage error={stages.error ?? moving.error} />
    </form>
  );
}

/** The feedback survey this feature asks in the environment shown, with a link to where surveys are set up. */
function FeatureSurvey({ scope, featureKey }: { scope: Scope; featureKey: string }) {
  // The list, not the feature's own survey route: a feature without one would be a 404 in the console.
  const surveys = useLoad(() => get<{ surveys: { featureKey: string; question: string; enabled: boolean }[] }>(`/admin/environments/${enc(scope.environmentId)}/surveys`), [scope.environmentId]);
  const survey = surveys.data?.surveys.find((each) => each.featureKey === featureKey);
  return (
    <p class="small stage-picker">
      Feedback survey in {scope.environment.name}: {survey ? <>asks “{survey.question}”{survey.enabled ? "" : " (paused)"}</> : <span class="muted">none</span>} —{" "}
      <a href={scope.link("surveys")}>{survey ? "edit it on the Surveys page" : "set one up on the Surveys page"}</a>
    </p>
  );
}
