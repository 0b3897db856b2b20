import { useState } from "preact/hooks";
import { ApiError, type Environment } from "../api";
import { useAction } from "../hooks/useAction";
import { ErrorMessage } from "../ui";
import { WEBHOOK_EVENT_TYPES, type WebhookFields, type WebhookFormat } from "../webhook-api";
import { Field } from "./Field";

/** The event types a person subscribes to, grouped as they read them; `webhook.test` is the test button's own. */
const EVENT_GROUPS: { title: string; prefix: RegExp }[] = [
  { title: "Features", prefix: /^(feature|targeting|config)\./ },
  { title: "Change requests", prefix: /^change_request\./ },
  { title: "Feedback", prefix: /^feedback\./ },
  { title: "Guarded rollouts", prefix: /^rollout\./ },
];

const EVENT_WORDS: Record<string, string> = {
  "feature.created": "Feature created",
  "feature.updated": "Feature updated",
  "feature.archived": "Feature archived",
  "targeting.changed": "Targeting changed",
  "config.changed": "Remote config changed",
  "feedback.created": "Feedback received",
  "rollout.rolled_back": "Rollout rolled back",
};

/** `change_request.approved` → "Change request approved", unless it has words of its own. */
export const eventWords = (type: string): string => EVENT_WORDS[type] ?? (type.charAt(0).toUpperCase() + type.slice(1)).replace(/[._]/g, " ");

let nextFormId = 0;

/**
 * A webhook's settings, for a new one and for an edit: the receiver's URL, the format, the events (every one, or
 * some), the environments (none ticked: every environment) and a description. The service's messages stand at
 * their fields, the SSRF refusal of the URL included.
 */
export function WebhookForm({ environments, initial, submitLabel, onSubmit, onCancel }: { environments: Environment[]; initial?: WebhookFields; submitLabel: string; onSubmit(fields: WebhookFields): Promise<void>; onCancel?(): void }) {
  const [id] = useState(() => `webhook-form-${++nextFormId}`);
  const [url, setUrl] = useState(initial?.url ?? "");
  const [format, setFormat] = useState<WebhookFormat>(initial?.format ?? "standard");
  const [every, setEvery] = useState(initial === undefined || initial.events.includes("*"));
  const [events, setEvents] = useState<string[]>(initial && !initial.events.includes("*") ? initial.events : []);
  const [chosenEnvironments, setEnvironments] = useState<string[]>(initial?.environments ?? []);
  const [description, setDescription] = useState(initial?.description ?? "");
  const [attempted, setAttempted] = useState(false);
  const saving = useAction();
  const local = [...(url.trim() === "" ? [{ path: "url", message: "Give the receiver's URL (http or https)." }] : []), ...(!every && events.length === 0 ? [{ path: "events", message: "Pick at least one event, or every event." }] : [])];
  const issues = saving.error instanceof ApiError ? saving.error.validationErrors : attempted ? local : [];
  const issueAt = (path: string) => issues.filter((issue) => issue.path === path || issue.path.startsWith(`${path}.`)).map((issue) => issue.message).join(" ") || undefined;
  const toggle = (list: string[], value: string, on: boolean) => (on ? [...list, value] : list.filter((each) => each !== value));
  const submit = (event: Event) => {
    event.preventDefault();
    if (local.length > 0) return setAttempted(true);
    void saving.run(() => onSubmit({ url: url.trim(), format, events: every ? ["*"] : WEBHOOK_EVENT_TYPES.filter((type) => events.includes(type)), environments: chosenEnvironments, description: description.trim() || null }));
  };
  const eventsError = issueAt("events");
  const environmentsError = issueAt("environments");
  return (
    <form class="webhook-form" onSubmit={submit} aria-label={submitLabel} noValidate>
      <Field label="Receiver URL" type="url" name="url" required placeholder="https://hooks.example.com/switchyard" value={url} error={issueAt("url")} onInput={(event) => setUrl((event.currentTarget as HTMLInputElement).value)} />
      <Field label="Format" error={issueAt("format")}>
        <select name="format" value={format} onChange={(event) => setFormat((event.currentTarget as HTMLSelectElement).value as WebhookFormat)}>
          <option value="standard">Standard Webhooks (signed JSON)</option>
          <option value="slack">Slack message (not signed)</option>
        </select>
      </Field>
      <fieldset aria-describedby={eventsError ? `${id}-events-error` : undefined}>
        <legend>Events</legend>
        <label class="check">
          <input type="checkbox" name="every-event" checked={every} onChange={(event) => setEvery((event.currentTarget as HTMLInputElement).checked)} />
          Every event, including kinds added later
        </label>
        {!every && (
          <div class="webhook-event-groups">
            {EVENT_GROUPS.map((group) => (
              <fieldset>
                <legend>{group.title}</legend>
                {WEBHOOK_EVENT_TYPES.filter((type) => group.prefix.test(type)).map((type) => (
                  <label class="check">
                    <input type="checkbox" name="events" value={type} checked={events.includes(type)} onChange={(event) => setEvents(toggle(events, type, (event.currentTarget as HTMLInputElement).checked))} />
                    <span class="webhook-event-label">
                      {eventWords(type)} <code class="muted small">{type}</code>
                    </span>
                  </label>
                ))}
              </fieldset>
            ))}
          </div>
        )}
        {eventsError && (
          <span class="field-error" id={`${id}-events-error`}>
            {eventsError}
          </span>
        )}
      </fieldset>
      <fieldset aria-describedby={`${id}-environments-help${environmentsError ? ` ${id}-environments-error` : ""}`}>
        <legend>Environments</legend>
        <p class="muted small" id={`${id}-environments-help`}>
          None ticked: every environment. Events of no environment (a feature created, updated or archived; a test) come either way.
        </p>
        {environments.map((environment) => (
          <label class="check">
            <input type="checkbox" name="environments" value={environment.id} checked={chosenEnvironments.includes(environment.id)} onChange={(event) => setEnvironments(toggle(chosenEnvironments, environment.id, (event.currentTarget as HTMLInputElement).checked))} />
            {environment.name}
          </label>
        ))}
        {environmentsError && (
          <span class="field-error" id={`${id}-environments-error`}>
            {environmentsError}
          </span>
        )}
      </fieldset>
      <Field label="Description (optional)" name="description" value={description} error={issueAt("description")} maxLength={500} onInput={(event) => setDescription((event.currentTarget as HTMLInputElement).value)} />
      <ErrorMessage error={saving.error} issues={false} />
      <div class="actions">
        <button type="submit" disabled={saving.busy}>
          {saving.busy ? "Saving…" : submitLabel}
        </button>
        {onCancel && (
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
