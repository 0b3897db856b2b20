/**
 * Segments of an app (docs/API.md "Segments"): named company filters that targeting names as "company in segment".
 * The list says who uses each one; a segment's page edits it with the rule editor's filter editor, shows the
 * companies of this environment it holds, and deletes it once no one names it.
 */
import { useState } from "preact/hooks";
import type { Scope } from "../scope";
import { api, ApiError, enc, get } from "../api";
import { FilterEditor, SegmentsContext } from "../rules/FilterEditor";
import { describe, localIssues, tidy, type Filter } from "../rules/model";
import { DataTable } from "../components/DataTable";
import { Card } from "../components/Card";
import { EntityLink } from "../components/EntityLink";
import { Field } from "../components/Field";
import { useConfirm } from "../components/ConfirmDialog";
import { useAction } from "../hooks/useAction";
import { navigate, scopedPath } from "../router";
import { ErrorMessage, Page, useLoad, when } from "../ui";

export interface Segment {
  id: string;
  name: string;
  description: string | null;
  filter: Filter;
  createdAt: string;
  updatedAt: string;
  usedBy: { segments: string[]; features: string[]; stages: string[] };
}

/** A new segment starts as one condition on the company's plan: segments filter companies only. */
const STARTING_FILTER: Filter = { type: "context", field: "company.plan", operator: "IS", values: [""] };

export const loadSegments = (appId: string) => get<{ segments: Segment[] }>(`/admin/apps/${enc(appId)}/segments`).then((answer) => answer.segments);

const isUsed = (segment: Segment) => segment.usedBy.segments.length + segment.usedBy.features.length + segment.usedBy.stages.length > 0;

/** Who names a segment, as links to their pages. */
function UsedBy({ scope, segment, segments }: { scope: Scope; segment: Segment; segments: Segment[] }) {
  const { usedBy } = segment;
  if (!isUsed(segment)) return <span class="muted">nothing yet</span>;
  const segmentId = (name: string) => segments.find((each) => each.name === name)?.id ?? name;
  return (
    <ul class="inline-list">
      {usedBy.features.map((key) => (
        <li>
          feature <EntityLink kind="features" id={key} />
        </li>
      ))}
      {usedBy.stages.map((name) => (
        <li>
          stage <a href={scope.link("stages")}>{name}</a>
        </li>
      ))}
      {usedBy.segments.map((name) => (
        <li>
          segment <a href={scope.link("segments", segmentId(name))}>{name}</a>
        </li>
      ))}
    </ul>
  );
}

export function Segments({ scope, segmentId }: { scope: Scope; segmentId?: string | undefined }) {
  // Read again on every move between the list and a segment: what was made or changed there shows at once.
  const segments = useLoad(() => loadSegments(scope.app.id), [scope.app.id, segmentId]);
  if (segmentId !== undefined) return <SegmentPage scope={scope} segmentId={segmentId} segments={segments.data} reload={segments.reload} />;
  const names = new Map((segments.data ?? []).map((segment) => [segment.id, segment.name]));
  return (
    <Page title="Segments" subtitle={`Named groups of companies of ${scope.app.name}: a rule says "company in segment" and every feature using it follows an edit.`}>
      <ErrorMessage error={segments.error} />
      <DataTable
        columns={["Segment", "Companies that", "Used by"]}
        rows={segments.data}
        row={(segment) => (
          <>
            <th scope="row">
              <a href={scope.link("segments", segment.id)}>{segment.name}</a>
              {segment.description && <div class="muted small">{segment.description}</div>}
            </th>
            <td>{describe(segment.filter, names)}</td>
            <td>
              <UsedBy scope={scope} segment={segment} segments={segments.data ?? []} />
            </td>
          </>
        )}
        empty={
          <div class="empty">
            <p>
              <strong>No segments yet.</strong> Make one for a group of companies you target again and again (paying customers, a pilot), then pick
              "Company in segment" in a feature's rules.
            </p>
          </div>
        }
      />
      {scope.canWrite && segments.data && <NewSegment scope={scope} segments={segments.data} />}
    </Page>
  );
}

/** The form of a segment's fields, for a new one and for an edit. */
function SegmentForm({
  scope,
  segments,
  initial,
  submitLabel,
  onSubmit,
}: {
  scope: Scope;
  segments: Segment[];
  initial: { name: string; description: string; filter: Filter; id?: string };
  submitLabel: string;
  onSubmit(fields: { name: string; description: string | null; filter: Filter }): Promise<void>;
}) {
  const [name, setName] = useState(initial.name);
  const [description, setDescription] = useState(initial.description);
  const [filter, setFilter] = useState(initial.filter);
  const [attempted, setAttempted] = useState(false);
  const saving = useAction();
  const local = [...(name.trim() ? [] : [{ path: "name", message: "Give the segment a name." }]), ...localIssues(filter, "filter")];
  const issues = saving.error instanceof ApiError ? saving.error.validationErrors : attempted ? local : [];
  const issueAt = (path: string) => issues.find((issue) => issue.path === path)?.message;
  // A segment cannot name itself: the picker offers the others.
  const others = segments.filter((segment) => segment.id !== initial.id).map((segment) => ({ id: segment.id, name: segment.name }));
  const submit = (event: Event) => {
    event.preventDefault();
    if (local.length > 0) return setAttempted(true);
    void saving.run(() => onSubmit({ name: name.trim(), description: description.trim() || null, filter: tidy(filter) }));
  };
  return (
    <SegmentsContext.Provider value={others}>
      <form onSubmit={submit} aria-label={submitLabel}>
        <div class="row">
          <Field label="Name" value={name} error={issueAt("name")} onInput={(event) => setName((event.currentTarget as HTMLInputElement).value)} />
          <Field label="Description (optional)" value={description} onInput={(event) => setDescription((event.currentTarget as HTMLInputElement).value)} />
        </div>
        <p class="muted small">The filter reads company attributes only (fields starting with company.).</p>
        <FilterEditor filter={filter} path="filter" issues={issues} featureKey={scope.app.id} readOnly={!scope.canWrite} label="Segment filter" onChange={setFilter} />
        {attempted && local.length > 0 && !saving.error && (
          <p class="error" role="alert">
            Not saved: fix the marked fields.
          </p>
        )}
        <ErrorMessage error={saving.error} issues={false} />
        <div class="actions">
          <button type="submit" disabled={saving.busy}>
            {saving.busy ? "Saving…" : submitLabel}
          </button>
        </div>
      </form>
    </SegmentsContext.Provider>
  );
}

function NewSegment({ scope, segments }: { scope: Scope; segments: Segment[] }) {
  const create = async (fields: { name: string; description: string | null; filter: Filter }) => {
    const { segment } = await api<{ segment: Segment }>("POST", `/admin/apps/${enc(scope.app.id)}/segments`, fields);
    navigate(scopedPath(scope.app.id, scope.environmentId, "segments", segment.id));
  };
  return (
    <Card id="new-segment-title" title="New segment">
      <SegmentForm scope={scope} segments={segments} initial={{ name: "", description: "", filter: STARTING_FILTER }} submitLabel="Create segment" onSubmit={create} />
    </Card>
  );
}

interface Members {
  companies: { id: string; attributes: Record<string, unknown>; lastSeen: string | null }[];
  next: string | null;
}

function SegmentPage({ scope, segmentId, segments, reload }: { scope: Scope; segmentId: string; segments: Segment[] | undefined; reload(): void }) {
  const segment = segments?.find((each) => each.id === segmentId || each.name === segmentId);
  const members = useLoad(
    () => (segment ? get<Members>(`/admin/environments/${enc(scope.environmentId)}/segments/${enc(segment.id)}/companies?limit=100`) : Promise.resolve(undefined)),
    [scope.environmentId, segment?.id, segment?.updatedAt],
  );
  const [notice, setNotice] = useState<string | undefined>();
  const removing = useAction();
  const confirm = useConfirm();
  if (!segments) return <p class="loading">Loading…</p>;
  if (!segment) {
    return (
      <Page title="Segment not found">
        <div class="empty">
          <p>{scope.app.name} has no segment {segmentId}: it may have been deleted.</p>
          <a href={scope.link("segments")}>See the segments of {scope.app.name}</a>
        </div>
      </Page>
    );
  }
  const save = async (fields: { name: string; description: string | null; filter: Filter }) => {
    const answer = await api<{ retargeted: unknown[] }>("PATCH", `/admin/apps/${enc(scope.app.id)}/segments/${enc(segment.id)}`, fields);
    const count = answer.retargeted.length;
    setNotice(count === 0 ? "Saved: no feature's served rules changed." : `Saved: ${count} feature ${count === 1 ? "targeting has" : "targetings have"} a new version.`);
    reload();
  };
  const remove = async () => {
    const confirmed = await confirm.ask({ title: `Delete segment ${segment.name}?`, message: "It is gone for good; no rule names it now.", confirm: "Delete segment", danger: true });
    if (!confirmed) return;
    await removing.run(async () => {
      await api("DELETE", `/admin/apps/${enc(scope.app.id)}/segments/${enc(segment.id)}`);
      navigate(scopedPath(scope.app.id, scope.environmentId, "segments"));
      reload();
    });
  };
  const used = isUsed(segment);
  return (
    <Page title={segment.name} subtitle={segment.description ?? undefined}>
      {confirm.dialog}
      <p>
        <a href={scope.link("segments")}>All segments</a>
      </p>
      <div aria-live="polite" class="notice-slot">
        {notice && <p class="success">{notice}</p>}
      </div>
      <div class="two-columns">
        <Card id="segment-edit-title" title="Filter">
          <SegmentForm
            key={segment.updatedAt}
            scope={scope}
            segments={segments}
            initial={{ id: segment.id, name: segment.name, description: segment.description ?? "", filter: segment.filter }}
            submitLabel="Save segment"
            onSubmit={save}
          />
        </Card>
        <div>
          <Card id="segment-used-title" title="Used by">
            <UsedBy scope={scope} segment={segment} segments={segments} />
            {scope.canWrite && (
              <div class="actions">
                <button type="button" class="secondary danger" disabled={used || removing.busy} aria-describedby={used ? "segment-in-use" : undefined} onClick={() => void remove()}>
                  Delete segment
                </button>
                {used && (
                  <span class="muted small" id="segment-in-use">
                    Deleting is possible once nothing above names it.
                  </span>
                )}
              </div>
            )}
            <ErrorMessage error={removing.error} />
          </Card>
          <Card id="segment-members-title" title={`Companies in ${scope.environment.name}`}>
            <ErrorMessage error={members.error} />
            <DataTable
              columns={["Company", "Last seen"]}
              rows={members.data?.companies}
              row={(company) => (
                <>
                  <th scope="row">
                    <EntityLink kind="companies" id={company.id} />
                  </th>
                  <td>{when(company.lastSeen)}</td>
                </>
              )}
              empty={<p class="muted">No tracked company of {scope.environment.name} is in it.</p>}
            />
            {members.data?.next && <p class="muted small">Showing the first {members.data.companies.length}; the CLI lists every page.</p>}
          </Card>
        </div>
      </div>
    </Page>
  );
}
