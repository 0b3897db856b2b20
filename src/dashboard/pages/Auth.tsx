import { useState } from "preact/hooks";
import { api, type Member } from "../api";
import { ErrorMessage } from "../ui";

export interface SignedIn {
  member: Member;
  csrfToken: string;
}

function value(form: HTMLFormElement, name: string): string {
  return (form.elements.namedItem(name) as HTMLInputElement).value;
}

/** `POST /admin/session` with email and password (API.md §8). */
export function SignIn({ onSignedIn, notice }: { onSignedIn(session: SignedIn): void; notice?: string }) {
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    setBusy(true);
    try {
      const answer = await api<SignedIn>("POST", "/admin/session", { email: value(form, "email"), password: value(form, "password") });
      onSignedIn(answer);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="auth" id="main">
      <h1>Sign in to Switchyard</h1>
      {notice && <p class="notice">{notice}</p>}
      <form onSubmit={submit} class="stack">
        <label>
          Email
          <input name="email" type="email" autocomplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        <ErrorMessage error={error} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}

/**
 * First start: no owner exists yet. The admin token (printed once by the service, kept in its data dir) creates the
 * first owner with `POST /admin/members`, then the page signs in as that owner. The token is only sent, never kept.
 */
export function FirstStart({ onSignedIn }: { onSignedIn(session: SignedIn): void }) {
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    setBusy(true);
    try {
      const email = value(form, "email");
      const password = value(form, "password");
      const name = value(form, "name");
      await api("POST", "/admin/members", { email, password, role: "owner", ...(name ? { name } : {}) }, { authorization: `Bearer ${value(form, "token").trim()}` });
      onSignedIn(await api<SignedIn>("POST", "/admin/session", { email, password }));
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="auth" id="main">
      <h1>Welcome to Switchyard</h1>
      <p>
        Create the first owner. The admin token was printed when the service first started, and is kept in{" "}
        <code>data/admin-token</code>.
      </p>
      <form onSubmit={submit} class="stack">
        <label>
          Admin token
          <input name="token" type="password" autocomplete="off" required />
        </label>
        <label>
          Your name
          <input name="name" type="text" autocomplete="name" />
        </label>
        <label>
          Email
          <input name="email" type="email" autocomplete="username" required />
        </label>
        <label>
          Password (at least 12 characters)
          <input name="password" type="password" autocomplete="new-password" minLength={12} required />
        </label>
        <ErrorMessage error={error} />
        <button type="submit" disabled={busy}>
          Create owner and sign in
        </button>
      </form>
    </main>
  );
}

/** The page of a reset link (`#/reset-password?token=…`, made by `switchyard members reset-password`). */
export function ResetPassword({ token, onDone }: { token: string; onDone(): void }) {
  const [error, setError] = useState<unknown>();
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      await api("POST", "/admin/password-reset", { token, password: value(event.currentTarget as HTMLFormElement, "password") });
      onDone();
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <main class="auth" id="main">
      <h1>Choose a new password</h1>
      <form onSubmit={submit} class="stack">
        <label>
          New password (at least 12 characters)
          <input name="password" type="password" autocomplete="new-password" minLength={12} required />
        </label>
        <ErrorMessage error={error} />
        <button type="submit">Set password</button>
      </form>
    </main>
  );
}
