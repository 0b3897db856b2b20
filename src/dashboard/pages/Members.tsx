import { useState } from "preact/hooks";
import { api, enc, get, type App as AppRecord, type Member } from "../api";
import { Card } from "../components/Card";
import { ACTIONS, DataTable } from "../components/DataTable";
import { Field } from "../components/Field";
import { OneTimeSecret } from "../components/OneTimeSecret";
import { Pager, useCursorPages } from "../components/Pager";
import { formChecked, formValue } from "../form";
import { useAction } from "../hooks/useAction";
import { useConfirm } from "../components/ConfirmDialog";
import { ErrorMessage, Page, useLoad, when } from "../ui";

interface Token {
  id: string;
  name: string;
  readOnly: boolean;
  createdAt: string;
  lastUsedAt: string | null;
  memberId?: string;
}

/** The member roles, in the order a list offers them (the invite form starts at the least access). */
function RoleOptions({ roles }: { roles: Member["role"][] }) {
  return (
    <>
      {roles.map((role) => (
        <option value={role}>{role}</option>
      ))}
    </>
  );
}

/** Owners: members (invite, role, remove) and API tokens (create, revoke). */
export function Members({ self }: { self: Member }) {
  const members = useLoad(() => get<{ members: Member[] }>("/admin/members"), []);
  const tokens = useLoad(() => get<{ tokens: Token[] }>("/admin/tokens"), []);
  const action = useAction();
  const [secret, setSecret] = useState<string | undefined>();
  const [resetLink, setResetLink] = useState<{ email: string; link: string } | undefined>();
  const confirm = useConfirm();
  const remove = async (member: Member) => {
    if (!(await confirm.ask({ title: `Remove ${member.email}?`, message: "Their sessions and API tokens stop working at once. Their past changes stay in the audit log.", confirm: "Remove member", danger: true }))) return;
    await act(() => api("DELETE", `/admin/members/${enc(member.id)}`), members.reload);
  };
  const revoke = async (token: Token) => {
    if (!(await confirm.ask({ title: `Revoke token ${token.name}?`, message: "Scripts and editors using it are refused from now on.", confirm: "Revoke token", danger: true }))) return;
    await act(() => api("DELETE", `/admin/tokens/${enc(token.id)}`), tokens.reload);
  };

  // Every write of the page shares one error slot: the latest failure shows, the next success clears it.
  const act = (write: () => Promise<unknown>, after: () => void) =>
    action.run(async () => {
      await write();
      after();
    });
  const invite = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    void act(() => api("POST", "/admin/members", { email: formValue(form, "email"), name: formValue(form, "name") || undefined, role: formValue(form, "role"), password: formValue(form, "password") }), () => (form.reset(), members.reload()));
  };
  const createToken = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    void act(
      async () => setSecret((await api<{ secret: string }>("POST", "/admin/tokens", { name: formValue(form, "tokenName"), readOnly: formChecked(form, "readOnly") })).secret),
      () => (form.reset(), tokens.reload()),
    );
  };

  return (
    <Page title="Members and tokens">
      {confirm.dialog}
      <ErrorMessage error={action.error ?? members.error ?? tokens.error} />
      <Card id="members-title" title="Members">
        <OneTimeSecret value={resetLink?.link} copyLabel={`Copy reset link for ${resetLink?.email}`}>
          Password reset link for <strong>{resetLink?.email}</strong>, valid 24 hours and shown only now: send it to them yourself.
        </OneTimeSecret>
        <DataTable
          columns={["Email", "Name", "Role", "Since", ACTIONS]}
          rows={members.data?.members}
          row={(member) => (
            <>
              <td>{member.email}</td>
              <td>{member.name}</td>
              <td>
                <label>
                  <span class="visually-hidden">Role of {member.email}</span>
                  <select value={member.role} disabled={action.busy} onChange={(event) => void act(() => api("PATCH", `/admin/members/${enc(member.id)}`, { role: (event.currentTarget as HTMLSelectElement).value }), members.reload)}>
                    <RoleOptions roles={["owner", "editor", "viewer"]} />
                  </select>
                </label>
              </td>
              <td>{when(member.createdAt)}</td>
              <td>
                <button
                  type="button"
                  class="link"
                  onClick={() =>
                    void act(async () => {
                      const answer = await api<{ reset: { link: string | null; token: string } }>("POST", `/admin/members/${enc(member.id)}/password-reset`);
                      setResetLink({ email: member.email, link: answer.reset.link ?? answer.reset.token });
                    }, () => undefined)
                  }
                >
                  Reset link<span class="visually-hidden"> for {member.email}</span>
                </button>
                {member.id !== self.id && (
                  <button type="button" class="link danger" disabled={action.busy} onClick={() => void remove(member)}>
                    Remove<span class="visually-hidden"> {member.email}</span>
                  </button>
                )}
              </td>
            </>
          )}
        />
        <form class="inline" onSubmit={invite} aria-label="Add a member">
          <Field label="Email" name="email" type="email" required />
          <Field label="Name" name="name" />
          <Field label="Role">
            <select name="role">
              <RoleOptions roles={["viewer", "editor", "owner"]} />
            </select>
          </Field>
          <Field label="Initial password" name="password" type="password" minLength={12} required autocomplete="new-password" />
          <button type="submit" disabled={action.busy}>
            Add member
          </button>
        </form>
      </Card>
      <Card id="tokens-title" title="API tokens">
        <OneTimeSecret value={secret} copyLabel="Copy the new token">
          New token, shown only now: copy it into your script's or editor's secrets.
        </OneTimeSecret>
        <DataTable
          columns={["Name", "Access", "Created", "Last used", ACTIONS]}
          rows={tokens.data?.tokens}
          empty={<p class="empty-inline">No API tokens yet. Scripts, the Reflag CLI and coding agents sign in with one: create it below.</p>}
          row={(token) => (
            <>
              <td>{token.name}</td>
              <td>{token.readOnly ? "read-only" : "role of its member"}</td>
              <td>{when(token.createdAt)}</td>
              <td>{when(token.lastUsedAt)}</td>
              <td>
                <button type="button" class="link danger" disabled={action.busy} onClick={() => void revoke(token)}>
                  Revoke<span class="visually-hidden"> {token.name}</span>
                </button>
              </td>
            </>
          )}
        />
        <form class="inline" onSubmit={createToken} aria-label="Create an API token">
          <Field label="Token name" name="tokenName" required />
          <label class="check">
            <input name="readOnly" type="checkbox" /> Read-only
          </label>
          <button type="submit" disabled={action.busy}>
            Create token
          </button>
        </form>
      </Card>
    </Page>
  );
}

interface AuditEntry {
  cursor: string;
  at: string;
  actor: { kind: string; id: string; email?: string };
  action: string;
  entity: { kind: string; id: string; key?: string; environmentId?: string };
  details: unknown;
}

const AUDIT_PAGE = 50;
const ENTITY_KINDS = ["app", "environment", "key", "feature", "targeting", "config", "stage", "segment", "member", "token", "session"];

/** Who and what an entry names, in words: emails, keys and names, never a bare id when the page knows better. */
function useNames(apps: AppRecord[], members: Member[] | undefined, entries: AuditEntry[] | undefined) {
  const appNames = new Map(apps.map((app) => [app.id, app.name]));
  const environmentNames = new Map(apps.flatMap((app) => app.environments.map((environment) => [environment.id, `${environment.name} (${app.name})`] as const)));
  const emails = new Map((members ?? []).map((member) => [member.id, member.email]));
  // Removed members are known from the entries themselves (their own actions, their creation and removal).
  for (const entry of entries ?? []) {
    if (entry.actor.kind === "member" && entry.actor.email && !emails.has(entry.actor.id)) emails.set(entry.actor.id, entry.actor.email);
    const email = (entry.details as { email?: unknown } | null)?.email;
    if (entry.entity.kind === "member" && typeof email === "string" && !emails.has(entry.entity.id)) emails.set(entry.entity.id, email);
  }
  const detail = (entry: AuditEntry, name: string) => {
    const value = (entry.details as Record<string, unknown> | null)?.[name];
    return typeof value === "string" ? value : undefined;
  };
  const actor = (entry: AuditEntry) => {
    if (entry.actor.kind === "admin") return "admin token";
    if (entry.actor.kind === "anonymous") return "someone signed out";
    const email = entry.actor.email ?? emails.get(entry.actor.id);
    return entry.actor.kind === "token" ? `${email ?? "a member"} (API token)` : (email ?? "a removed member");
  };
  const target = (entry: AuditEntry): string => {
    const { kind, id, key, environmentId } = entry.entity;
    const where = environmentId ? ` in ${environmentNames.get(environmentId) ?? "a deleted environment"}` : "";
    if (key) return `${kind} ${key}${where}`;
    switch (kind) {
      case "app":
        return `app ${appNames.get(id) ?? detail(entry, "name") ?? "(deleted)"}`;
      case "environment":
        return `environment ${environmentNames.get(id) ?? "(deleted)"}`;
      case "key":
        return `${detail(entry, "kind") ?? ""} key of ${environmentNames.get(id) ?? "a deleted environment"}`.trim();
      case "member":
        return `member ${emails.get(id) ?? "(removed)"}`;
      case "session":
        return `session of ${detail(entry, "email") ?? actor(entry)}`;
      case "token":
        return `token ${detail(entry, "name") ?? ""}`.trim();
      default:
        return detail(entry, "name") ? `${kind} ${detail(entry, "name")}` : kind;
    }
  };
  return { actor, target };
}

/** The audit log (API.md §8): newest first, actors by email and targets by name, filtered by who, feature, kind and date. */
export function Audit({ apps = [] }: { apps?: AppRecord[] }) {
  const members = useLoad(() => get<{ members: Member[] }>("/admin/members"), []);
  const [filters, setFilters] = useState({ entity: "", actor: "", key: "", until: "" });
  const pages = useCursorPages();
  const cursor = pages.cursor;
  const page = useLoad(() => {
    const query = new URLSearchParams({ limit: String(AUDIT_PAGE), order: "newest" });
    if (cursor) query.set("after", cursor);
    if (filters.entity) query.set("entity", filters.entity);
    if (filters.actor) query.set("actor", filters.actor);
    if (filters.key) query.set("key", filters.key);
    // The whole chosen day, in the viewer's time zone.
    if (filters.until) query.set("until", new Date(`${filters.until}T23:59:59.999`).toISOString());
    return get<{ entries: AuditEntry[]; next: string }>(`/admin/audit?${query}`);
  }, [cursor, filters.entity, filters.actor, filters.key, filters.until]);
  const names = useNames(apps, members.data?.members, page.data?.entries);
  const apply = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    pages.first();
    setFilters({ entity: formValue(form, "entity"), actor: formValue(form, "actor"), key: formValue(form, "key").trim(), until: formValue(form, "until") });
  };
  const filtered = Object.values(filters).some(Boolean);
  return (
    <Page title="Audit log" subtitle="Every change and sign-in on this Switchyard, newest first.">
      <form class="inline card" onSubmit={apply} aria-label="Filter the audit log">
        <Field label="Who">
          <select name="actor">
            <option value="">anyone</option>
            <option value="admin">the admin token</option>
            {members.data?.members.map((member) => (
              <option value={member.id}>{member.email}</option>
            ))}
          </select>
        </Field>
        <Field label="Feature key" name="key" placeholder="any feature" />
        <Field label="Kind">
          <select name="entity">
            <option value="">any kind</option>
            {ENTITY_KINDS.map((kind) => (
              <option value={kind}>{kind}</option>
            ))}
          </select>
        </Field>
        <Field label="On or before" name="until" type="date" />
        <button type="submit">Filter</button>
      </form>
      <ErrorMessage error={page.error ?? members.error} />
      <DataTable
        columns={["When", "Who", "Action", "What"]}
        rows={page.data?.entries}
        row={(entry) => (
          <>
            <td>{when(entry.at)}</td>
            <td>{names.actor(entry)}</td>
            <td>
              <code>{entry.action}</code>
            </td>
            <td>{names.target(entry)}</td>
          </>
        )}
        empty={<p class="empty-inline">{filtered ? "No entries match these filters." : "Nothing has happened yet."}</p>}
      />
      {/* A full page is the only sign that another may follow: the audit API always answers with a cursor. */}
      <Pager pages={pages} next={page.data && page.data.entries.length >= AUDIT_PAGE && page.data.next} noun="entries" />
    </Page>
  );
}
