/** Creating an app or an environment: from the header, or as the first app of an empty Switchyard; each ends on its keys. */
import { useState } from "preact/hooks";
import { api, type App as AppRecord, type Environment } from "./api";
import type { FreshKeys } from "./scope";
import { ErrorMessage, Page } from "./ui";

export type Created = (app: AppRecord | undefined, environmentId: string, keys: Record<string, FreshKeys>) => void;

/** The keys of a new app's environments, from the one answer that holds its secret keys in full. */
function freshOfApp(app: AppRecord & { trackingKey: string }): Record<string, FreshKeys> {
  return Object.fromEntries(
    app.environments.map((environment) => [
      environment.id,
      { made: "app" as const, secretKey: environment.secretKey, publishableKey: environment.publishableKey, ...(environment.id === app.defaultEnvironmentId ? { trackingKey: app.trackingKey } : {}) },
    ]),
  );
}

async function createApp(name: string, onCreated: Created): Promise<void> {
  const { app } = await api<{ app: AppRecord }>("POST", "/admin/apps", { name });
  onCreated(app, app.defaultEnvironmentId, freshOfApp(app));
}

/** Creates an app or an environment of the current app from the header; either ends on its keys page. */
export function NewScope({ app, onCreated }: { app: AppRecord; onCreated: Created }) {
  const [open, setOpen] = useState<"app" | "environment" | undefined>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const name = ((event.currentTarget as HTMLFormElement).elements.namedItem("scopeName") as HTMLInputElement).value.trim();
    setBusy(true);
    try {
      if (open === "app") await createApp(name, onCreated);
      else {
        const { environment } = await api<{ environment: Environment }>("POST", `/admin/apps/${encodeURIComponent(app.id)}/environments`, { name });
        onCreated(app, environment.id, { [environment.id]: { made: "environment", secretKey: environment.secretKey, publishableKey: environment.publishableKey } });
      }
      setOpen(undefined);
      setError(undefined);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  if (!open) {
    return (
      <div class="new-scope">
        <button type="button" class="link" onClick={() => setOpen("environment")}>
          New environment
        </button>
        <button type="button" class="link" onClick={() => setOpen("app")}>
          New app
        </button>
      </div>
    );
  }
  return (
    <form class="inline new-scope popover" onSubmit={submit}>
      <label>
        {open === "app" ? "New app name" : `New environment of ${app.name}`}
        <input name="scopeName" required autoFocus />
      </label>
      <button type="submit" disabled={busy}>
        {open === "app" ? "Create app" : "Create environment"}
      </button>
      <button type="button" class="secondary" onClick={() => (setOpen(undefined), setError(undefined))}>
        Cancel
      </button>
      <ErrorMessage error={error} />
    </form>
  );
}

export function NoApps({ canWrite, onCreated }: { canWrite: boolean; onCreated: Created }) {
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const name = ((event.currentTarget as HTMLFormElement).elements.namedItem("name") as HTMLInputElement).value.trim();
    setBusy(true);
    try {
      await createApp(name, onCreated);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Page title="Create your first app">
      <div class="empty">
        <p>An app holds your features and gets two environments, production and development, each with its own SDK keys.</p>
        {canWrite ? (
          <form onSubmit={submit} class="inline">
            <label>
              App name
              <input name="name" required placeholder="My product" />
            </label>
            <button type="submit" disabled={busy}>
              Create app
            </button>
            <ErrorMessage error={error} />
          </form>
        ) : (
          <p>Ask an editor or owner of this Switchyard to create one.</p>
        )}
      </div>
    </Page>
  );
}
