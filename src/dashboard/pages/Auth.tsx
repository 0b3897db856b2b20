import type { ComponentChildren } from "preact";
import { api, type Member } from "../api";
import { Field } from "../components/Field";
import { formValue } from "../form";
import { useAction } from "../hooks/useAction";
import { ErrorMessage } from "../ui";

export interface SignedIn {
  member: Member;
  csrfToken: string;
}

/** The frame of the pages before a session: no navigation, one card in the middle. */
function AuthPage({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <main class="auth" id="main">
      <h1>{title}</h1>
      {children}
    </main>
  );
}

/** `POST /admin/session` with email and password (API.md §8). */
export function SignIn({ onSignedIn, notice }: { onSignedIn(session: SignedIn): void; notice?: string }) {
  const signIn = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    void signIn.run(async () => onSignedIn(await api<SignedIn>("POST", "/admin/session", { email: formValue(form, "email"), password: formValue(form, "password") })));
  };
  return (
    <AuthPage title="Sign in to Switchyard">
      {notice && <p class="notice">{notice}</p>}
      <form onSubmit={submit} class="stack">
        <Field label="Email" name="email" type="email" autocomplete="username" required />
        <Field label="Password" name="password" type="password" autocomplete="current-password" required />
        <ErrorMessage error={signIn.error} />
        <button type="submit" disabled={signIn.busy}>
          Sign in
        </button>
      </form>
    </AuthPage>
  );
}

/**
 * First start: no owner exists yet. The admin token (printed once by the service, kept in its data dir) creates the
 * first owner with `POST /admin/members`, then the page signs in as that owner. The token is only sent, never kept.
 */
export function FirstStart({ onSignedIn }: { onSignedIn(session: SignedIn): void }) {
  const create = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    void create.run(async () => {
      const email = formValue(form, "email");
      const password = formValue(form, "password");
      const name = formValue(form, "name");
      await api("POST", "/admin/members", { email, password, role: "owner", ...(name ? { name } : {}) }, { authorization: `Bearer ${formValue(form, "token").trim()}` });
      onSignedIn(await api<SignedIn>("POST", "/admin/session", { email, password }));
    });
  };
  return (
    <AuthPage title="Welcome to Switchyard">
      <p>
        Create the first owner. The admin token was printed when the service first started, and is kept in the file{" "}
        <code>admin-token</code> of the service's data directory (<code>SWITCHYARD_DATA_DIR</code>; <code>data</code> unless set). It is only sent, never kept.
      </p>
      <form onSubmit={submit} class="stack">
        <Field label="Admin token" name="token" type="password" autocomplete="off" required />
        <Field label="Your name" name="name" type="text" autocomplete="name" />
        <Field label="Email" name="email" type="email" autocomplete="username" required />
        <NewPassword />
        <ErrorMessage error={create.error} />
        <button type="submit" disabled={create.busy}>
          Create owner and sign in
        </button>
      </form>
    </AuthPage>
  );
}

/** The page of a reset link (`#/reset-password?token=…`, made by `switchyard members reset-password`). */
export function ResetPassword({ token, onDone }: { token: string; onDone(): void }) {
  const reset = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    void reset.run(async () => {
      await api("POST", "/admin/password-reset", { token, password: formValue(form, "password") });
      onDone();
    });
  };
  return (
    <AuthPage title="Choose a new password">
      <form onSubmit={submit} class="stack">
        <NewPassword label="New password (at least 12 characters)" />
        <ErrorMessage error={reset.error} />
        <button type="submit" disabled={reset.busy}>
          Set password
        </button>
      </form>
    </AuthPage>
  );
}

/** A password being chosen: the service's minimum length (12) checked before sending, and a password manager's hint. */
function NewPassword({ label = "Password (at least 12 characters)" }: { label?: string }) {
  return <Field label={label} name="password" type="password" autocomplete="new-password" minLength={12} required />;
}
