import { useState } from "preact/hooks";
import { api, ApiError, enc, type Feature } from "../api";
import { ErrorMessage } from "../ui";

/** App-level facts of a feature (all environments): description, link, stage, opt-in, usage event names. */
export function FeatureSettings({ appId, feature, canWrite, onSaved }: { appId: string; feature: Feature & { usageEvents?: string[] }; canWrite: boolean; onSaved(message: string): void }) {
  const [error, setError] = useState<unknown>();
  const issues = error instanceof ApiError ? error.validationErrors : [];
  const issueAt = (field: string) => issues.find((issue) => issue.path === field)?.message;
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const text = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).value.trim();
    try {
      await api("PUT", `/admin/apps/${enc(appId)}/features/${enc(feature.key)}`, {
        name: text("name") || null,
        description: text("description") || null,
        link: text("link") || null,
        stage: text("stage") || null,
        optInEnabled: (form.elements.namedItem("optInEnabled") as HTMLInputElement).checked,
        usageEvents: text("usageEvents")
          .split(",")
          .map((name) => name.trim())
          .filter(Boolean),
      });
      setError(undefined);
      onSaved("Settings saved.");
    } catch (caught) {
      setError(caught);
    }
  };
  const field = (name: string, label: string, value: string) => (
    <label>
      {label}
      <input name={name} defaultValue={value} disabled={!canWrite} aria-invalid={issueAt(name) ? true : undefined} />
      {issueAt(name) && <span class="field-error">{issueAt(name)}</span>}
    </label>
  );
  return (
    <section class="card" aria-labelledby="settings-title">
      <h2 id="settings-title">Settings (every environment)</h2>
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
    </section>
  );
}
