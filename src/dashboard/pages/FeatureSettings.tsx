import { api, ApiError, enc, type Feature } from "../api";
import { Card } from "../components/Card";
import { Field } from "../components/Field";
import { formChecked, formValue } from "../form";
import { useAction } from "../hooks/useAction";
import { ErrorMessage } from "../ui";

/** App-level facts of a feature (all environments): description, link, stage, opt-in, usage event names. */
export function FeatureSettings({ appId, feature, canWrite, onSaved }: { appId: string; feature: Feature & { usageEvents?: string[] }; canWrite: boolean; onSaved(message: string): void }) {
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
        stage: text("stage") || null,
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
      <form class="inline" onSubmit={submit}>
        {field("name", "Name", feature.name ?? "")}
        {field("description", "Description", feature.description ?? "")}
        {field("link", "Link", feature.link ?? "")}
        {field("stage", "Stage", feature.stage ?? "")}
        {field("usageEvents", "Usage events (comma-separated)", (feature.usageEvents ?? []).join(", "))}
        <label class="check">
          <input name="optInEnabled" type="checkbox" defaultChecked={feature.optInEnabled} disabled={!canWrite} /> Users and companies may opt in
        </label>
        {canWrite && <button type="submit">Save settings</button>}
      </form>
      <ErrorMessage error={error} />
    </Card>
  );
}
