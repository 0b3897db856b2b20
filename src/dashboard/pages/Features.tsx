import { useMemo, useState } from "preact/hooks";
import type { Scope } from "../App";
import { api, enc, get, type EnvironmentFeature } from "../api";
import { stateOf, type Rule } from "../rules/model";
import { navigate } from "../router";
import { actorName, ErrorMessage, Page, useLoad, when } from "../ui";

type SortKey = "key" | "stage" | "changed" | "created";

/** Features of the app: one column of off / some / everyone per environment, the selected one's last change. */
export function Features({ scope }: { scope: Scope }) {
  const { app, environmentId, canWrite } = scope;
  const loaded = useLoad(
    () =>
      Promise.all(
        app.environments.map((environment) =>
          get<{ features: EnvironmentFeature[] }>(`/admin/environments/${enc(environment.id)}/features`).then((answer) => [environment.id, answer.features] as const),
        ),
      ).then((pairs) => new Map(pairs)),
    [app.id],
  );
  const [search, setSearch] = useState("");
  const [sort, setSort] = useState<{ key: SortKey; descending: boolean }>({ key: "key", descending: false });
  const [actionError, setActionError] = useState<unknown>();
  const [creating, setCreating] = useState(false);

  const rows = useMemo(() => {
    const features = loaded.data?.get(environmentId) ?? [];
    const needle = search.trim().toLowerCase();
    const matching = needle
      ? features.filter((feature) => [feature.key, feature.name, feature.description, feature.stage].some((text) => text?.toLowerCase().includes(needle)))
      : features;
    const value = (feature: EnvironmentFeature): string =>
      sort.key === "key" ? feature.key : sort.key === "stage" ? (feature.stage ?? "") : sort.key === "changed" ? (feature.lastChange?.at ?? "") : feature.createdAt;
    const sorted = [...matching].sort((a, b) => value(a).localeCompare(value(b)));
    return sort.descending ? sorted.reverse() : sorted;
  }, [loaded.data, environmentId, search, sort]);

  const archive = async (key: string) => {
    if (!confirm(`Archive feature ${key}? It disappears from every environment's answers.`)) return;
    try {
      await api("DELETE", `/admin/apps/${enc(app.id)}/features/${enc(key)}`);
      loaded.reload();
    } catch (error) {
      setActionError(error);
    }
  };

  const header = (key: SortKey, label: string) => {
    const active = sort.key === key;
    return (
      <th scope="col" aria-sort={active ? (sort.descending ? "descending" : "ascending") : "none"}>
        <button type="button" class="sort" onClick={() => setSort({ key, descending: active ? !sort.descending : false })}>
          {label} {active ? (sort.descending ? "▼" : "▲") : ""}
        </button>
      </th>
    );
  };

  return (
    <Page
      title="Features"
      actions={
        canWrite && (
          <button type="button" onClick={() => setCreating(!creating)} aria-expanded={creating}>
            New feature
          </button>
        )
      }
    >
      {creating && <CreateFeature appId={app.id} onCreated={(key) => navigate(`/features/${enc(key)}`)} />}
      <div class="toolbar">
        <label>
          Search features
          <input type="search" value={search} onInput={(event) => setSearch((event.currentTarget as HTMLInputElement).value)} />
        </label>
        <span class="muted" aria-live="polite">
          {loaded.data ? `${rows.length} feature${rows.length === 1 ? "" : "s"}` : ""}
        </span>
      </div>
      <ErrorMessage error={loaded.error ?? actionError} />
      {loaded.data && (
        <table class="list">
          <thead>
            <tr>
              {header("key", "Feature")}
              {header("stage", "Stage")}
              {app.environments.map((environment) => (
                <th scope="col">{environment.name}</th>
              ))}
              {header("changed", "Last change")}
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((feature) => (
              <tr>
                <td>
                  <a href={`#/features/${enc(feature.key)}`}>{feature.name && feature.name !== feature.key ? feature.name : feature.key}</a>
                  {feature.name && feature.name !== feature.key && <code class="muted"> {feature.key}</code>}
                  {feature.description && <div class="muted small">{feature.description}</div>}
                </td>
                <td>{feature.stage ?? "—"}</td>
                {app.environments.map((environment) => {
                  const there = loaded.data!.get(environment.id)?.find((each) => each.key === feature.key);
                  const state = there ? stateOf(there.targeting.rules as Rule[]) : "off";
                  return (
                    <td>
                      <span class={`state state-${state}`}>{state}</span>
                    </td>
                  );
                })}
                <td>
                  {feature.lastChange ? (
                    <>
                      {when(feature.lastChange.at)}
                      <div class="muted small">by {actorName(feature.lastChange.actor)}</div>
                    </>
                  ) : (
                    <span class="muted">never targeted</span>
                  )}
                </td>
                <td>
                  {canWrite && (
                    <button type="button" class="link danger" onClick={() => archive(feature.key)} aria-label={`Archive ${feature.key}`}>
                      Archive
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {loaded.data && rows.length === 0 && <p class="muted">No features{search ? " match" : " yet"}.</p>}
    </Page>
  );
}

function CreateFeature({ appId, onCreated }: { appId: string; onCreated(key: string): void }) {
  const [error, setError] = useState<unknown>();
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const field = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).value.trim();
    const key = field("key");
    try {
      const existing = await get<{ features: { key: string }[] }>(`/admin/apps/${enc(appId)}/features`);
      if (existing.features.some((feature) => feature.key === key)) throw new Error(`A feature ${key} exists already.`);
      await api("PUT", `/admin/apps/${enc(appId)}/features/${enc(key)}`, { description: field("description") || null, stage: field("stage") || null });
      onCreated(key);
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <form class="card inline" onSubmit={submit} aria-label="New feature">
      <label>
        Key
        <input name="key" required pattern="[^\s]+" title="No spaces" />
      </label>
      <label>
        Description
        <input name="description" />
      </label>
      <label>
        Stage
        <input name="stage" list="stages" />
        <datalist id="stages">
          <option value="alpha" />
          <option value="beta" />
          <option value="general availability" />
        </datalist>
      </label>
      <button type="submit">Create feature</button>
      <ErrorMessage error={error} />
    </form>
  );
}
