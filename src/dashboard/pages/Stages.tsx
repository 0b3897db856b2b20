/**
 * Release stages of an app (docs/API.md "release stages"): in order, each with the features in it and its rules per
 * environment. Moving a feature into a stage gives it the stage's rules; editing a stage's rules can re-apply them
 * to every feature in it, in one change.
 */
import { useState } from "preact/hooks";
import type { Scope } from "../scope";
import { api, ApiError, enc, get } from "../api";
import { SegmentsContext } from "../rules/FilterEditor";
import { RulesEditor } from "../rules/RulesEditor";
import { localIssues, tidy, type Filter } from "../rules/model";
import { Card } from "../components/Card";
import { EntityLink } from "../components/EntityLink";
import { Field } from "../components/Field";
import { useConfirm } from "../components/ConfirmDialog";
import { useAction } from "../hooks/useAction";
import { ErrorMessage, Page, useLoad } from "../ui";
import { loadSegments } from "./Segments";

export interface Stage {
  id: string;
  name: string;
  order: number;
  targeting: Record<string, { rules: { filter: Filter }[] }>;
  features: string[];
  createdAt: string;
}

type Rules = { filter: Filter }[];

/** The orders that put `stages` in the sequence given: 1, 2, 3 … (only stages whose order changes are written). */
export function reorderWrites(stages: Stage[], from: number, to: number): { id: string; order: number }[] {
  const moved = [...stages];
  const [stage] = moved.splice(from, 1);
  moved.splice(to, 0, stage!);
  return moved.map((each, index) => ({ id: each.id, order: index + 1 })).filter((write) => stages.find((each) => each.id === write.id)!.order !== write.order);
}

export function Stages({ scope }: { scope: Scope }) {
  const stages = useLoad(() => get<{ stages: Stage[] }>(`/admin/apps/${enc(scope.app.id)}/stages`).then((answer) => answer.stages), [scope.app.id]);
  const segments = useLoad(() => loadSegments(scope.app.id), [scope.app.id]);
  const moving = useAction();
  const [notice, setNotice] = useState<string | undefined>();
  const list = stages.data ?? [];
  const move = (index: number, to: number) =>
    moving.run(async () => {
      const stage = list[index]!;
      for (const write of reorderWrites(list, index, to)) await api("PATCH", `/admin/apps/${enc(scope.app.id)}/stages/${enc(write.id)}`, { order: write.order });
      setNotice(`${stage.name} is now stage ${to + 1} of ${list.length}.`);
      stages.reload();
      // Focus follows the stage to its new place, so a keyboard can keep moving it.
      requestAnimationFrame(() => document.getElementById(`stage-${stage.id}`)?.focus());
    });
  return (
    <SegmentsContext.Provider value={segments.data ?? []}>
      <Page title="Release stages" subtitle={`The path a feature of ${scope.app.name} takes to everyone. Putting a feature in a stage gives it the stage's rules in every environment.`}>
        <ErrorMessage error={stages.error ?? moving.error} />
        <div aria-live="polite" class="notice-slot">
          {notice && <p class="success">{notice}</p>}
        </div>
        <ol class="stage-list">
          {list.map((stage, index) => (
            <li key={stage.id}>
              <StageCard
                scope={scope}
                stage={stage}
                position={index}
                count={list.length}
                busy={moving.busy}
                onMove={(to) => void move(index, to)}
                onChanged={(message) => (setNotice(message), stages.reload())}
              />
            </li>
          ))}
        </ol>
        {scope.canWrite && stages.data && <NewStage scope={scope} onCreated={(name) => (setNotice(`Stage ${name} created.`), stages.reload())} />}
      </Page>
    </SegmentsContext.Provider>
  );
}

function StageCard({
  scope,
  stage,
  position,
  count,
  busy,
  onMove,
  onChanged,
}: {
  scope: Scope;
  stage: Stage;
  position: number;
  count: number;
  busy: boolean;
  onMove(to: number): void;
  onChanged(message: string): void;
}) {
  const [editing, setEditing] = useState(false);
  const removing = useAction();
  const confirm = useConfirm();
  const remove = async () => {
    const confirmed = await confirm.ask({ title: `Delete stage ${stage.name}?`, message: "Features are put in stages by name: none is in this one.", confirm: "Delete stage", danger: true });
    if (!confirmed) return;
    await removing.run(async () => {
      await api("DELETE", `/admin/apps/${enc(scope.app.id)}/stages/${enc(stage.id)}`);
      onChanged(`Stage ${stage.name} deleted.`);
    });
  };
  const headingId = `stage-${stage.id}`;
  return (
    <section class="card stage" aria-labelledby={headingId}>
      {confirm.dialog}
      <div class="row">
        <h2 id={headingId} tabIndex={-1}>
          <span class="muted">{position + 1}.</span> {stage.name}
        </h2>
        {scope.canWrite && (
          <div class="row-actions">
            <button type="button" class="secondary" disabled={busy || position === 0} onClick={() => onMove(position - 1)}>
              Move up<span class="visually-hidden"> {stage.name}</span>
            </button>
            <button type="button" class="secondary" disabled={busy || position === count - 1} onClick={() => onMove(position + 1)}>
              Move down<span class="visually-hidden"> {stage.name}</span>
            </button>
            <button type="button" class="secondary" aria-expanded={editing} aria-controls={`${headingId}-rules`} onClick={() => setEditing(!editing)}>
              {editing ? "Close rules" : `Edit rules of ${stage.name}`}
            </button>
            <button type="button" class="link danger" disabled={stage.features.length > 0 || removing.busy} title={stage.features.length > 0 ? "Move its features to another stage first" : undefined} onClick={() => void remove()}>
              Delete {stage.name}
            </button>
          </div>
        )}
      </div>
      <p>
        {stage.features.length === 0 ? (
          <span class="muted">No feature in it.</span>
        ) : (
          <>
            {stage.features.length} {stage.features.length === 1 ? "feature" : "features"}:{" "}
            <span class="inline-list">
              {stage.features.map((key, index) => (
                <>
                  {index > 0 && ", "}
                  <EntityLink kind="features" id={key} />
                </>
              ))}
            </span>
          </>
        )}
      </p>
      <ul class="inline-list muted small">
        {scope.app.environments.map((environment) => (
          <li>
            {environment.name}: {rulesSummary(stage.targeting[environment.id]?.rules)}
          </li>
        ))}
      </ul>
      <ErrorMessage error={removing.error} />
      {editing && <StageRules id={`${headingId}-rules`} scope={scope} stage={stage} onSaved={(message) => (setEditing(false), onChanged(message))} />}
    </section>
  );
}

function rulesSummary(rules: Rules | undefined): string {
  if (!rules || rules.length === 0) return "nobody";
  if (rules.some((rule) => rule.filter.type === "constant" && rule.filter.value)) return "everyone";
  return `${rules.length} ${rules.length === 1 ? "rule" : "rules"}`;
}

/** A stage's rules, one environment at a time; saving writes every environment's rules as one change. */
function StageRules({ id, scope, stage, onSaved }: { id: string; scope: Scope; stage: Stage; onSaved(message: string): void }) {
  const [environmentId, setEnvironmentId] = useState(scope.environmentId);
  const [rulesByEnvironment, setRules] = useState<Record<string, Rules>>(() =>
    Object.fromEntries(scope.app.environments.map((environment) => [environment.id, stage.targeting[environment.id]?.rules ?? []])),
  );
  const [reapply, setReapply] = useState(stage.features.length > 0);
  const [jsonError, setJsonError] = useState<string | undefined>();
  const [attempted, setAttempted] = useState(false);
  const saving = useAction();
  const local = scope.app.environments.flatMap((environment) =>
    (rulesByEnvironment[environment.id] ?? []).flatMap((rule, index) => localIssues(rule.filter, `targeting.${environment.id}.rules.${index}.filter`)),
  );
  const prefix = `targeting.${environmentId}.`;
  const all = saving.error instanceof ApiError ? saving.error.validationErrors : attempted ? local : [];
  // The editor shows one environment's rules, whose paths start at `rules`.
  const issues = all.filter((issue) => issue.path.startsWith(prefix)).map((issue) => ({ ...issue, path: issue.path.slice(prefix.length) }));
  const elsewhere = [...new Set(all.filter((issue) => !issue.path.startsWith(prefix)).map((issue) => issue.path.split(".")[1]))];
  const save = () => {
    if (local.length > 0) return setAttempted(true);
    void saving.run(async () => {
      const targeting = Object.fromEntries(Object.entries(rulesByEnvironment).map(([environment, rules]) => [environment, { rules: rules.map((rule) => ({ filter: tidy(rule.filter) })) }]));
      const answer = await api<{ reapplied: unknown[] }>("PATCH", `/admin/apps/${enc(scope.app.id)}/stages/${enc(stage.id)}`, { targeting, reapply });
      onSaved(reapply ? `Rules of ${stage.name} saved and applied to ${answer.reapplied.length} ${answer.reapplied.length === 1 ? "feature" : "features"}.` : `Rules of ${stage.name} saved.`);
    });
  };
  return (
    <div id={id} class="stage-rules">
      <Field label="Environment">
        <select value={environmentId} onChange={(event) => setEnvironmentId((event.currentTarget as HTMLSelectElement).value)}>
          {scope.app.environments.map((environment) => (
            <option value={environment.id}>{environment.name}</option>
          ))}
        </select>
      </Field>
      <RulesEditor
        key={environmentId}
        rules={rulesByEnvironment[environmentId] ?? []}
        onChange={(rules) => setRules({ ...rulesByEnvironment, [environmentId]: rules })}
        onJsonError={setJsonError}
        issues={issues}
        featureKey={stage.name}
        readOnly={!scope.canWrite}
      />
      {elsewhere.length > 0 && (
        <p class="error" role="alert">
          Rules of another environment need fixing: {elsewhere.map((environment) => scope.app.environments.find((each) => each.id === environment)?.name ?? environment).join(", ")}.
        </p>
      )}
      <ErrorMessage error={saving.error} issues={false} />
      <label class="check">
        <input type="checkbox" checked={reapply} onChange={(event) => setReapply((event.currentTarget as HTMLInputElement).checked)} />
        Also give these rules to the {stage.features.length} {stage.features.length === 1 ? "feature" : "features"} in {stage.name} (a new targeting version each)
      </label>
      <div class="actions">
        <button type="button" disabled={saving.busy || jsonError !== undefined} onClick={save}>
          {saving.busy ? "Saving…" : "Save stage rules"}
        </button>
      </div>
    </div>
  );
}

function NewStage({ scope, onCreated }: { scope: Scope; onCreated(name: string): void }) {
  const creating = useAction();
  const [name, setName] = useState("");
  const submit = (event: Event) => {
    event.preventDefault();
    void creating.run(async () => {
      await api("POST", `/admin/apps/${enc(scope.app.id)}/stages`, { name: name.trim() });
      onCreated(name.trim());
      setName("");
    });
  };
  const issue = creating.error instanceof ApiError ? creating.error.validationErrors.find((each) => each.path === "name")?.message : undefined;
  return (
    <Card id="new-stage-title" title="New stage">
      <form class="inline" onSubmit={submit} aria-label="New stage">
        <Field label="Stage name" required value={name} error={issue} onInput={(event) => setName((event.currentTarget as HTMLInputElement).value)} />
        <button type="submit" disabled={creating.busy}>
          Add stage at the end
        </button>
      </form>
      <ErrorMessage error={creating.error} issues={false} />
    </Card>
  );
}
