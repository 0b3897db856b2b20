import { useEffect, useState } from "preact/hooks";
import type { Scope } from "../scope";
import { enc, get } from "../api";
import { AdoptionTable } from "../components/AdoptionTable";
import { Card } from "../components/Card";
import { DataTable } from "../components/DataTable";
import { EntityLink } from "../components/EntityLink";
import { Field } from "../components/Field";
import { Pager, useCursorPages } from "../components/Pager";
import { ErrorMessage, Page, useLoad, when } from "../ui";
import { windowOf } from "./Adoption";
import { FeedbackList, loadFeedback, type FeedbackEntry } from "../components/FeedbackList";

interface EntityRow {
  id: string;
  attributes: Record<string, unknown>;
  firstSeen: string | null;
  lastSeen: string | null;
}

const PAGE = 50;

/** Companies or users of the environment, a page at a time from the server (100,000 never reach the page at once). */
export function EntityList({ scope, kind }: { scope: Scope; kind: "companies" | "users" }) {
  const [prefix, setPrefix] = useState("");
  const pages = useCursorPages();
  const cursor = pages.cursor;
  useEffect(() => {
    pages.first();
    setPrefix("");
  }, [scope.environmentId, kind]);
  const page = useLoad(() => {
    const query = new URLSearchParams({ limit: String(PAGE) });
    if (prefix) query.set("prefix", prefix);
    if (cursor) query.set("after", cursor);
    return get<Record<string, EntityRow[]> & { next: string | null }>(`/admin/environments/${enc(scope.environmentId)}/${kind}?${query}`);
  }, [scope.environmentId, kind, prefix, cursor]);
  const rows = (page.data?.[kind] ?? []) as EntityRow[];
  const singular = kind === "companies" ? "Company" : "User";
  return (
    <Page title={kind === "companies" ? "Companies" : "Users"}>
      <div class="toolbar">
        <Field
          // Two text nodes, as the page always drew it: Chromium shapes each apart, one node would shift a glyph.
          label={<>{singular} id starts with</>}
          type="search"
          value={prefix}
          onInput={(event) => {
            // A new search starts at its first page, in the same render (no request with the old cursor).
            pages.first();
            setPrefix((event.currentTarget as HTMLInputElement).value);
          }}
        />
      </div>
      <ErrorMessage error={page.error} />
      <DataTable
        columns={[singular, "Name", "Last seen", "First seen"]}
        rows={rows}
        row={(row) => (
          <>
            <td>
              <EntityLink kind={kind} id={row.id} />
            </td>
            <td>{typeof row.attributes.name === "string" ? row.attributes.name : "—"}</td>
            <td>{when(row.lastSeen)}</td>
            <td>{when(row.firstSeen)}</td>
          </>
        )}
        empty={
          page.data &&
          (prefix ? (
            <p class="empty-inline">No {kind} whose id starts with “{prefix}”.</p>
          ) : (
            <div class="empty">
              <p>
                <strong>No {kind} tracked yet.</strong> They appear when an SDK sends a {kind === "companies" ? "company" : "user"} (its context, or a{" "}
                <code>{kind === "companies" ? "/company" : "/user"}</code> call) with this environment's key: see <a href={scope.link("keys")}>Keys & SDKs</a>.
              </p>
            </div>
          ))
        }
      />
      <Pager pages={pages} next={page.data?.next} />
    </Page>
  );
}

interface CompanyDetailData {
  company: { id: string; attributes: Record<string, unknown>; firstSeen: string; lastSeen: string | null; userIds: string[] };
  features: { key: string; state: string; usageDays: number; lastUsedAt: string | null; satisfaction: { count: number; average: number | null } }[];
  feedback: FeedbackEntry[];
}

/** One company: attributes, users, the features it uses with their adoption state (30 days), its feedback. */
export function CompanyDetail({ scope, companyId }: { scope: Scope; companyId: string }) {
  const base = `/admin/environments/${enc(scope.environmentId)}`;
  const range = windowOf(30);
  const data = useLoad(async (): Promise<CompanyDetailData> => {
    const [company, analytics, feedback] = await Promise.all([
      get<{ company: CompanyDetailData["company"] }>(`${base}/companies/${enc(companyId)}`),
      get<{ features: CompanyDetailData["features"] }>(`${base}/analytics/companies/${enc(companyId)}?from=${range.from}&to=${range.to}`),
      loadFeedback(scope.environmentId),
    ]);
    return { company: company.company, features: analytics.features, feedback: feedback.filter((entry) => (entry.companyId ?? entry.countsForCompanyId) === companyId) };
  }, [base, companyId]);
  const d = data.data;
  return (
    <Page title={`Company ${companyId}`} >
      <ErrorMessage error={data.error} />
      {d && (
        <>
          <Card id="attributes-title" title="Attributes">
            <p class="muted">
              First seen {when(d.company.firstSeen)} · last seen {when(d.company.lastSeen)}
            </p>
            <AttributeTable attributes={d.company.attributes} />
            <h3>Users</h3>
            <LinkList kind="users" ids={d.company.userIds} />
          </Card>
          <Card id="company-features-title" title="Features (last 30 days)">
            <AdoptionTable nameColumn="Feature" rows={d.features} name={(feature) => <EntityLink kind="features" id={feature.key} />} />
          </Card>
          <Card id="company-feedback-title" title="Feedback">
            {d.feedback.length === 0 ? <p class="muted">None.</p> : <FeedbackList entries={d.feedback} />}
          </Card>
        </>
      )}
    </Page>
  );
}

/** One user: attributes, companies, feedback. */
export function UserDetail({ scope, userId }: { scope: Scope; userId: string }) {
  const user = useLoad(
    () =>
      Promise.all([
        get<{ user: { id: string; attributes: Record<string, unknown>; firstSeen: string; lastSeen: string | null; companyIds: string[] } }>(`/admin/environments/${enc(scope.environmentId)}/users/${enc(userId)}`),
        loadFeedback(scope.environmentId),
      ]).then(([answer, feedback]) => ({ user: answer.user, feedback: feedback.filter((entry) => entry.userId === userId) })),
    [scope.environmentId, userId],
  );
  const u = user.data?.user;
  return (
    <Page title={`User ${userId}`}>
      <ErrorMessage error={user.error} />
      {u && (
        <Card id="user-attributes-title" title="Attributes">
          <p class="muted">
            First seen {when(u.firstSeen)} · last seen {when(u.lastSeen)}
          </p>
          <AttributeTable attributes={u.attributes} />
          <h3>Companies</h3>
          <LinkList kind="companies" ids={u.companyIds} />
          <h3>Feedback</h3>
          {user.data!.feedback.length === 0 ? <p class="muted">None.</p> : <FeedbackList entries={user.data!.feedback} />}
        </Card>
      )}
      {u && <UserFeatures environmentId={scope.environmentId} userId={u.id} companyId={u.companyIds[0]} />}
    </Page>
  );
}

/** A company's users or a user's companies, as links in a line. */
function LinkList({ kind, ids }: { kind: "users" | "companies"; ids: string[] }) {
  return (
    <p>
      {ids.length === 0
        ? "None."
        : ids.map((id, index) => (
            <>
              {index > 0 && ", "}
              <EntityLink kind={kind} id={id} />
            </>
          ))}
    </p>
  );
}

function AttributeTable({ attributes }: { attributes: Record<string, unknown> }) {
  const entries = Object.entries(attributes);
  if (entries.length === 0) return <p class="muted">No attributes.</p>;
  return (
    <table class="list">
      <tbody>
        {entries.map(([name, value]) => (
          <tr>
            <th scope="row">{name}</th>
            <td>{typeof value === "string" ? value : <code>{JSON.stringify(value)}</code>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * The features as an SDK sees them for this user (with their first company, stored attributes filled in as for an
 * SDK): the service's own evaluator, the same answer as `/features/evaluated`.
 */
function UserFeatures({ environmentId, userId, companyId }: { environmentId: string; userId: string; companyId: string | undefined }) {
  const evaluated = useLoad(() => {
    const query = new URLSearchParams({ "context.user.id": userId });
    if (companyId) query.set("context.company.id", companyId);
    return get<{ features: Record<string, { isEnabled: boolean; targetingVersion: number }> }>(`/admin/environments/${enc(environmentId)}/evaluate?${query}`).then((answer) =>
      Object.entries(answer.features).sort(([a], [b]) => a.localeCompare(b)),
    );
  }, [environmentId, userId, companyId]);
  return (
    <Card id="user-features-title" title="Features for this user">
      <p class="muted">As an SDK sees them now{companyId ? <> with company <EntityLink kind="companies" id={companyId} /></> : ""}, stored attributes included.</p>
      <ErrorMessage error={evaluated.error} />
      <DataTable
        columns={["Feature", "State"]}
        rows={evaluated.data}
        row={([key, feature]) => (
          <>
            <td>
              <EntityLink kind="features" id={key} />
            </td>
            <td>
              <span class={`state state-${feature.isEnabled ? "everyone" : "off"}`}>{feature.isEnabled ? "on" : "off"}</span>
            </td>
          </>
        )}
        empty={<p class="empty-inline">This app has no features yet.</p>}
      />
    </Card>
  );
}
