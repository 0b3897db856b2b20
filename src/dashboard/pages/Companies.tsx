import { useEffect, useState } from "preact/hooks";
import type { Scope } from "../App";
import { enc, get } from "../api";
import { ErrorMessage, Page, useLoad, when } from "../ui";
import { windowOf } from "./Adoption";
import { loadFeedback, type FeedbackEntry } from "./Feedback";

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
  const [after, setAfter] = useState<string[]>([]);
  const cursor = after[after.length - 1];
  useEffect(() => {
    setAfter([]);
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
        <label>
          {singular} id starts with
          <input
            type="search"
            value={prefix}
            onInput={(event) => {
              // A new search starts at its first page, in the same render (no request with the old cursor).
              setAfter([]);
              setPrefix((event.currentTarget as HTMLInputElement).value);
            }}
          />
        </label>
      </div>
      <ErrorMessage error={page.error} />
      <table class="list">
        <thead>
          <tr>
            <th scope="col">{singular}</th>
            <th scope="col">Name</th>
            <th scope="col">Last seen</th>
            <th scope="col">First seen</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr>
              <td>
                <a href={`#/${kind}/${enc(row.id)}`}>{row.id}</a>
              </td>
              <td>{typeof row.attributes.name === "string" ? row.attributes.name : "—"}</td>
              <td>{when(row.lastSeen)}</td>
              <td>{when(row.firstSeen)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {page.data && rows.length === 0 && <p class="muted">None{prefix ? " match" : " tracked yet"}.</p>}
      <div class="actions">
        <button type="button" class="secondary" disabled={after.length === 0} onClick={() => setAfter(after.slice(0, -1))}>
          Previous page
        </button>
        <button type="button" class="secondary" disabled={!page.data?.next} onClick={() => page.data?.next && setAfter([...after, page.data.next])}>
          Next page
        </button>
      </div>
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
    return { company: company.company, features: analytics.features, feedback: feedback.filter((entry) => entry.companyId === companyId) };
  }, [base, companyId]);
  const d = data.data;
  return (
    <Page title={`Company ${companyId}`} actions={<a href="#/companies">All companies</a>}>
      <ErrorMessage error={data.error} />
      {d && (
        <>
          <section class="card" aria-labelledby="attributes-title">
            <h2 id="attributes-title">Attributes</h2>
            <p class="muted">
              First seen {when(d.company.firstSeen)} · last seen {when(d.company.lastSeen)}
            </p>
            <AttributeTable attributes={d.company.attributes} />
            <h3>Users</h3>
            <p>
              {d.company.userIds.length === 0
                ? "None."
                : d.company.userIds.map((userId, index) => (
                    <>
                      {index > 0 && ", "}
                      <a href={`#/users/${enc(userId)}`}>{userId}</a>
                    </>
                  ))}
            </p>
          </section>
          <section class="card" aria-labelledby="company-features-title">
            <h2 id="company-features-title">Features (last 30 days)</h2>
            <table class="list">
              <thead>
                <tr>
                  <th scope="col">Feature</th>
                  <th scope="col">State</th>
                  <th scope="col">Days used</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Satisfaction</th>
                </tr>
              </thead>
              <tbody>
                {d.features.map((feature) => (
                  <tr>
                    <td>
                      <a href={`#/features/${enc(feature.key)}`}>{feature.key}</a>
                    </td>
                    <td>{feature.state}</td>
                    <td>{feature.usageDays}</td>
                    <td>{when(feature.lastUsedAt)}</td>
                    <td>{feature.satisfaction.average === null ? "—" : feature.satisfaction.average.toFixed(1)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
          <section class="card" aria-labelledby="company-feedback-title">
            <h2 id="company-feedback-title">Feedback</h2>
            {d.feedback.length === 0 ? <p class="muted">None.</p> : <FeedbackList entries={d.feedback} />}
          </section>
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
        <section class="card" aria-labelledby="user-attributes-title">
          <h2 id="user-attributes-title">Attributes</h2>
          <p class="muted">
            First seen {when(u.firstSeen)} · last seen {when(u.lastSeen)}
          </p>
          <AttributeTable attributes={u.attributes} />
          <h3>Companies</h3>
          <p>
            {u.companyIds.length === 0
              ? "None."
              : u.companyIds.map((companyId, index) => (
                  <>
                    {index > 0 && ", "}
                    <a href={`#/companies/${enc(companyId)}`}>{companyId}</a>
                  </>
                ))}
          </p>
          <h3>Feedback</h3>
          {user.data!.feedback.length === 0 ? <p class="muted">None.</p> : <FeedbackList entries={user.data!.feedback} />}
        </section>
      )}
    </Page>
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
            <td>
              <code>{JSON.stringify(value)}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function FeedbackList({ entries }: { entries: FeedbackEntry[] }) {
  return (
    <table class="list">
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Feature</th>
          <th scope="col">Score</th>
          <th scope="col">Comment</th>
          <th scope="col">Company</th>
          <th scope="col">User</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((entry) => (
          <tr>
            <td>{when(entry.timestamp)}</td>
            <td>{entry.key}</td>
            <td>{entry.score ?? "—"}</td>
            <td>{entry.comment ?? ""}</td>
            <td>{entry.companyId ? <a href={`#/companies/${enc(entry.companyId)}`}>{entry.companyId}</a> : "—"}</td>
            <td>{entry.userId}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
