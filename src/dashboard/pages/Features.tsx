import { useMemo, useState } from "preact/hooks";
import type { Scope } from "../scope";
import { api, enc, get, type EnvironmentFeature } from "../api";
import { stateOf, type Rule } from "../rules/model";
import { navigate, scopedPath } from "../router";
import { windowOf, type FeatureFigures } from "./Adoption";
import { ACTIONS, DataTable, type Column } from "../components/DataTable";
import { Field } from "../components/Field";
import { formValue } from "../form";
import { useAction } from "../hooks/useAction";
import { useConfirm } from "../components/ConfirmDialog";
import { loadStages } from "./FeatureSettings";
import { KillSwitch } from "../components/KillSwitch";
import { loadPolicy } from "../governance";
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
  // Companies that tried / adopted each feature in the last 30 days (docs/ANALYTICS.md), for the selected environment.
  const adoption = useLoad(() => {
    const range = windowOf(30);
    return get<{ features: FeatureFigures[] }>(`/admin/environments/${enc(environmentId)}/analytics/features?from=${range.from}&to=${range.to}`).then(
      (answer) => new Map(answer.features.map((figures) => [figures.key, figures])),
    );
  }, [environmentId]);
  const policy = useLoad(() => loadPolicy(environmentId), [environmentId]);
  const [switched, setSwitched] = useState<{ text: string; held: boolean } | undefined>();
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

  const confirm = useConfirm();
  const [archiving, setArchiving] = useState<string | undefined>();
  const archive = async (key: string) => {
    const confirmed = await confirm.ask({
      title: `Archive ${key}?`,
      message: `It disappears from every environment's answers to SDKs at once: code that checks it gets "off". Its history is kept.`,
      confirm: "Archive feature",
      danger: true,
    });
    if (!confirmed) return;
    setArchiving(key);
    try {
      await api("DELETE", `/admin/apps/${enc(app.id)}/features/${enc(key)}`);
      setActionError(undefined);
      loaded.reload();
    } catch (error) {
      setActionError(error);
    } finally {
      setArchiving(undefined);
    }
  };

  // A sortable column: its header is a button (so a keyboard sorts too), aria-sort says the order to screen readers.
  const sortable = (key: SortKey, label: string): Column => {
    const active = sort.key === key;
    return {
      sort: active ? (sort.descending ? "descending" : "ascending") : "none",
      label: (
        <button type="button" class="sort" onClick={() => setSort({ key, descending: active ? !sort.descending : false })}>
          {label} {active ? (sort.descending ? "▼" : "▲") : ""}
        </button>
      ),
    };
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
      {confirm.dialog}
      {creating && <CreateFeature appId={app.id} onCreated={(key) => navigate(scope.link("features", key).slice(1))} onCancel={() => setCreating(false)} />}
      <div class="toolbar">
        <Field label="Search features" type="search" value={search} onInput={(event) => setSearch((event.currentTarget as HTMLInputElement).value)} />
        <span class="muted" aria-live="polite">
          {loaded.data ? `${rows.length} feature${rows.length === 1 ? "" : "s"}` : ""}
        </span>
      </div>
      <ErrorMessage error={loaded.error ?? actionError ?? adoption.error ?? policy.error} />
      <div aria-live="polite" class="notice-slot">
        {switched && <p class={switched.held ? "warning" : "success"}>{switched.text}</p>}
      </div>
      {loaded.data && (
        <DataTable
          columns={[
            sortable("key", "Feature"),
            sortable("stage", "Stage"),
            ...app.environments.map((environment) => environment.name),
            `Served in ${scope.environment.name}`,
            sortable("changed", "Last change"),
            "Tried (30 d)",
            "Adopted (30 d)",
            ACTIONS,
          ]}
          rows={rows}
          row={(feature) => (
            <>
              <td>
                <a href={scope.link("features", feature.key)}>{feature.name && feature.name !== feature.key ? feature.name : feature.key}</a>
                {feature.name && feature.name !== feature.key && <code class="muted"> {feature.key}</code>}
                {feature.description && <div class="muted small">{feature.description}</div>}
                {feature.stale && <StaleMark reason={feature.staleReason} />}
              </td>
              <td>{feature.stage ?? "—"}</td>
              {app.environments.map((environment) => {
                const there = loaded.data!.get(environment.id)?.find((each) => each.key === feature.key);
                // The kill switch holds a feature off whatever its rules say (its rules are kept for when it is back on).
                const state = there && there.enabled !== false ? stateOf(there.targeting.rules as Rule[]) : "off";
                // Each state opens the feature in that environment (its own URL, §9).
                return (
                  <td>
                    <a class={`state state-${state} state-link`} href={`#${scopedPath(app.id, environment.id, "features", feature.key)}`} aria-label={`${state} in ${environment.name}`}>
                      {state}
                    </a>
                  </td>
                );
              })}
              <td>
                <KillSwitch
                  key={`${environmentId}:${feature.key}:${feature.enabled}`}
                  scope={scope}
                  featureKey={feature.key}
                  enabled={feature.enabled}
                  policy={policy.data}
                  onChanged={(_on, text) => (setSwitched({ text, held: false }), loaded.reload())}
                  onHeld={(text) => setSwitched({ text, held: true })}
                />
              </td>
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
              <td>{adoption.data?.get(feature.key)?.companies.tried ?? "—"}</td>
              <td>{adoption.data?.get(feature.key)?.companies.adopted ?? "—"}</td>
              <td>
                {canWrite && (
                  <button type="button" class="link danger" disabled={archiving !== undefined} onClick={() => archive(feature.key)} aria-label={`Archive ${feature.key}`}>
                    Archive
                  </button>
                )}
              </td>
            </>
          )}
          empty={
            search ? (
              <p class="empty-inline">No feature matches “{search}”.</p>
            ) : (
              <div class="empty">
                <p>
                  <strong>No features yet.</strong> A feature is a switch your code checks: create one here, then check its key with an SDK (see{" "}
                  <a href={scope.link("keys")}>Keys & SDKs</a>).
                </p>
              </div>
            )
          }
        />
      )}
    </Page>
  );
}

const STALE_REASONS = {
  unevaluated: "nothing evaluated it for 30 days",
  constant: "every environment served everyone the same answer for 30 days",
};

/** The same mark MCP's list_flags gives (docs/API.md §12), its reason in words rather than only a colour or a tooltip. */
function StaleMark({ reason }: { reason: EnvironmentFeature["staleReason"] }) {
  const why = reason ? STALE_REASONS[reason] : "";
  return (
    <div class="stale-mark">
      <span class="badge badge-stale">stale</span>
      {why && <span class="muted small"> {why}</span>}
    </div>
  );
}

function CreateFeature({ appId, onCreated, onCancel }: { appId: string; onCreated(key: string): void; onCancel(): void }) {
  const creating = useAction();
  const stages = useLoad(() => loadStages(appId), [appId]);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const field = (name: string) => formValue(form, name).trim();
    const key = field("key");
    const stageId = field("stage");
    await creating.run(async () => {
      const existing = await get<{ features: { key: string }[] }>(`/admin/apps/${enc(appId)}/features`);
      if (existing.features.some((feature) => feature.key === key)) throw new Error(`A feature ${key} exists already: choose another key, or open it from the list.`);
      await api("PUT", `/admin/apps/${enc(appId)}/features/${enc(key)}`, { name: field("name") || null, description: field("description") || null });
      // A new feature in a release stage starts with that stage's targeting, as the stage's own move does.
      if (stageId) await api("PUT", `/admin/apps/${enc(appId)}/features/${enc(key)}/stage`, { stage: stageId });
      onCreated(key);
    });
  };
  return (
    <form class="card inline" onSubmit={submit} aria-label="New feature">
      <Field label="Key" name="key" required pattern="[^\s]+" title="No spaces" autoFocus />
      <Field label="Name" name="name" />
      <Field label="Description" name="description" />
      <Field label="Release stage">
        <select name="stage">
          <option value="">no stage (off everywhere)</option>
          {stages.data?.map((stage) => (
            <option value={stage.id}>{stage.name}</option>
          ))}
        </select>
      </Field>
      <button type="submit" disabled={creating.busy}>
        Create feature
      </button>
      <button type="button" class="secondary" onClick={onCancel}>
        Cancel
      </button>
      <ErrorMessage error={creating.error ?? stages.error} />
    </form>
  );
}
