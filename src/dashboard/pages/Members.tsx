import { useState } from "preact/hooks";
import { api, enc, get, type Member } from "../api";
import { actorName, ErrorMessage, Page, useLoad, when } from "../ui";

interface Token {
  id: string;
  name: string;
  readOnly: boolean;
  createdAt: string;
  lastUsedAt: string | null;
  memberId?: string;
}

function field(form: HTMLFormElement, name: string): string {
  return (form.elements.namedItem(name) as HTMLInputElement).value;
}

/** Owners: members (invite, role, remove) and API tokens (create, revoke). */
export function Members({ self }: { self: Member }) {
  const members = useLoad(() => get<{ members: Member[] }>("/admin/members"), []);
  const tokens = useLoad(() => get<{ tokens: Token[] }>("/admin/tokens"), []);
  const [error, setError] = useState<unknown>();
  const [secret, setSecret] = useState<string | undefined>();

  const act = async (action: () => Promise<unknown>, after: () => void) => {
    try {
      await action();
      setError(undefined);
      after();
    } catch (caught) {
      setError(caught);
    }
  };
  const invite = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    void act(() => api("POST", "/admin/members", { email: field(form, "email"), name: field(form, "name") || undefined, role: field(form, "role"), password: field(form, "password") }), () => (form.reset(), members.reload()));
  };
  const createToken = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    void act(
      async () => setSecret((await api<{ secret: string }>("POST", "/admin/tokens", { name: field(form, "tokenName"), readOnly: (form.elements.namedItem("readOnly") as HTMLInputElement).checked })).secret),
      () => (form.reset(), tokens.reload()),
    );
  };

  return (
    <Page title="Members and tokens">
      <ErrorMessage error={error ?? members.error ?? tokens.error} />
      <section class="card" aria-labelledby="members-title">
        <h2 id="members-title">Members</h2>
        <table class="list">
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Since</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {members.data?.members.map((member) => (
              <tr>
                <td>{member.email}</td>
                <td>{member.name}</td>
                <td>
                  <label>
                    <span class="visually-hidden">Role of {member.email}</span>
                    <select value={member.role} onChange={(event) => void act(() => api("PATCH", `/admin/members/${enc(member.id)}`, { role: (event.currentTarget as HTMLSelectElement).value }), members.reload)}>
                      <option value="owner">owner</option>
                      <option value="editor">editor</option>
                      <option value="viewer">viewer</option>
                    </select>
                  </label>
                </td>
                <td>{when(member.createdAt)}</td>
                <td>
                  {member.id !== self.id && (
                    <button type="button" class="link danger" onClick={() => confirm(`Remove ${member.email}? Their sessions and tokens stop at once.`) && void act(() => api("DELETE", `/admin/members/${enc(member.id)}`), members.reload)}>
                      Remove {member.email}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <form class="inline" onSubmit={invite} aria-label="Add a member">
          <label>
            Email
            <input name="email" type="email" required />
          </label>
          <label>
            Name
            <input name="name" />
          </label>
          <label>
            Role
            <select name="role">
              <option value="viewer">viewer</option>
              <option value="editor">editor</option>
              <option value="owner">owner</option>
            </select>
          </label>
          <label>
            Initial password
            <input name="password" type="password" minLength={12} required autocomplete="new-password" />
          </label>
          <button type="submit">Add member</button>
        </form>
      </section>
      <section class="card" aria-labelledby="tokens-title">
        <h2 id="tokens-title">API tokens</h2>
        {secret && (
          <p class="notice" role="status">
            New token, shown only now: <code>{secret}</code>
          </p>
        )}
        <table class="list">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Access</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tokens.data?.tokens.map((token) => (
              <tr>
                <td>{token.name}</td>
                <td>{token.readOnly ? "read-only" : "role of its member"}</td>
                <td>{when(token.createdAt)}</td>
                <td>{when(token.lastUsedAt)}</td>
                <td>
                  <button type="button" class="link danger" onClick={() => confirm(`Revoke token ${token.name}?`) && void act(() => api("DELETE", `/admin/tokens/${enc(token.id)}`), tokens.reload)}>
                    Revoke {token.name}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <form class="inline" onSubmit={createToken} aria-label="Create an API token">
          <label>
            Token name
            <input name="tokenName" required />
          </label>
          <label class="check">
            <input name="readOnly" type="checkbox" /> Read-only
          </label>
          <button type="submit">Create token</button>
        </form>
      </section>
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

/** The audit log (API.md §8), paged oldest first as the API pages it, with its entity and actor filters. */
export function Audit() {
  const [filters, setFilters] = useState({ entity: "", actor: "" });
  const [after, setAfter] = useState<string[]>([]);
  const cursor = after[after.length - 1];
  const page = useLoad(() => {
    const query = new URLSearchParams({ limit: "50" });
    if (cursor) query.set("after", cursor);
    if (filters.entity) query.set("entity", filters.entity);
    if (filters.actor) query.set("actor", filters.actor);
    return get<{ entries: AuditEntry[]; next: string }>(`/admin/audit?${query}`);
  }, [cursor, filters.entity, filters.actor]);
  const apply = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    setAfter([]);
    setFilters({ entity: field(form, "entity").trim(), actor: field(form, "actor").trim() });
  };
  return (
    <Page title="Audit log">
      <form class="inline" onSubmit={apply} aria-label="Filter the audit log">
        <label>
          Entity kind
          <input name="entity" list="entity-kinds" />
          <datalist id="entity-kinds">
            {["app", "environment", "key", "feature", "targeting", "config", "member", "token", "session"].map((kind) => (
              <option value={kind} />
            ))}
          </datalist>
        </label>
        <label>
          Actor (member id or admin)
          <input name="actor" />
        </label>
        <button type="submit">Filter</button>
      </form>
      <ErrorMessage error={page.error} />
      <table class="list">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Who</th>
            <th scope="col">Action</th>
            <th scope="col">Entity</th>
          </tr>
        </thead>
        <tbody>
          {page.data?.entries.map((entry) => (
            <tr>
              <td>{when(entry.at)}</td>
              <td>{actorName(entry.actor)}</td>
              <td>{entry.action}</td>
              <td>
                {entry.entity.kind} <code>{entry.entity.key ?? entry.entity.id}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="actions">
        <button type="button" class="secondary" disabled={after.length === 0} onClick={() => setAfter(after.slice(0, -1))}>
          Previous page
        </button>
        <button type="button" class="secondary" disabled={!page.data || page.data.entries.length < 50} onClick={() => page.data && setAfter([...after, page.data.next])}>
          Next page
        </button>
      </div>
    </Page>
  );
}
