import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError, get, setCsrfToken, type App as AppRecord, type Member } from "./api";
import { FirstStart, ResetPassword, SignIn, type SignedIn } from "./pages/Auth";
import { FeatureDetail } from "./pages/FeatureDetail";
import { Features } from "./pages/Features";
import { Keys } from "./pages/Keys";
import { LiveEvents } from "./pages/LiveEvents";
import { Audit, Members } from "./pages/Members";
import { navigate, useHashRoute } from "./router";
import { ErrorMessage } from "./ui";

type Boot =
  | { state: "loading" }
  | { state: "failed"; error: unknown }
  | { state: "first-start" }
  | { state: "signed-out"; notice?: string }
  | { state: "signed-in"; member: Member };

export interface Scope {
  apps: AppRecord[];
  app: AppRecord;
  environmentId: string;
  member: Member;
  canWrite: boolean;
  reloadApps(): void;
}

export function App() {
  const [boot, setBoot] = useState<Boot>({ state: "loading" });
  const route = useHashRoute();

  const start = async () => {
    try {
      const session = await api<{ member: Member; csrfToken: string }>("GET", "/admin/session");
      setCsrfToken(session.csrfToken);
      setBoot({ state: "signed-in", member: session.member });
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 401) return setBoot({ state: "failed", error });
      const setup = await get<{ hasOwner: boolean }>("/admin/setup").catch(() => ({ hasOwner: true }));
      setBoot(setup.hasOwner ? { state: "signed-out" } : { state: "first-start" });
    }
  };
  useEffect(() => {
    void start();
  }, []);

  const signedIn = (session: SignedIn) => {
    setCsrfToken(session.csrfToken);
    setBoot({ state: "signed-in", member: session.member });
  };
  const signOut = async () => {
    await api("DELETE", "/admin/session").catch(() => undefined);
    setCsrfToken(undefined);
    setBoot({ state: "signed-out", notice: "You are signed out." });
  };

  if (route.path === "/reset-password") {
    return <ResetPassword token={route.query.get("token") ?? ""} onDone={() => (navigate("/"), setBoot({ state: "signed-out", notice: "Password set: sign in with it." }))} />;
  }
  switch (boot.state) {
    case "loading":
      return <p class="loading">Loading…</p>;
    case "failed":
      return (
        <main id="main" class="auth">
          <ErrorMessage error={boot.error} />
        </main>
      );
    case "first-start":
      return <FirstStart onSignedIn={signedIn} />;
    case "signed-out":
      return <SignIn onSignedIn={signedIn} notice={boot.notice} />;
    case "signed-in":
      return <Shell member={boot.member} onSignOut={signOut} onExpired={() => setBoot({ state: "signed-out", notice: "Your session ended: sign in again." })} />;
  }
}

const STORED_SCOPE = "switchyard.scope";

function Shell({ member, onSignOut, onExpired }: { member: Member; onSignOut(): void; onExpired(): void }) {
  const route = useHashRoute();
  const [apps, setApps] = useState<AppRecord[] | undefined>();
  const [error, setError] = useState<unknown>();
  const [scope, setScope] = useState<{ appId?: string; environmentId?: string }>(() => {
    try {
      return JSON.parse(localStorage.getItem(STORED_SCOPE) ?? "{}") as { appId?: string; environmentId?: string };
    } catch {
      return {};
    }
  });
  const loadApps = () =>
    get<{ apps: AppRecord[] }>("/admin/apps").then(
      (answer) => setApps(answer.apps),
      (caught: unknown) => (caught instanceof ApiError && caught.status === 401 ? onExpired() : setError(caught)),
    );
  useEffect(() => {
    void loadApps();
  }, []);
  useEffect(() => localStorage.setItem(STORED_SCOPE, JSON.stringify(scope)), [scope]);
  // After moving to another page (not on first load), focus its heading so screen readers announce it.
  const firstPath = useRef(route.path);
  useEffect(() => {
    if (route.path === firstPath.current) return;
    firstPath.current = "";
    requestAnimationFrame(() => document.getElementById("page-title")?.focus());
  }, [route.path]);

  const app = apps?.find((each) => each.id === scope.appId) ?? apps?.[0];
  const environment = app?.environments.find((each) => each.id === scope.environmentId) ?? app?.environments.find((each) => each.id === app.defaultEnvironmentId) ?? app?.environments[0];
  const canWrite = member.role !== "viewer";
  const isOwner = member.role === "owner";

  const nav = [
    ["/", "Features"],
    ["/keys", "Keys & SDKs"],
    ["/events", "Live events"],
    ...(isOwner ? [["/members", "Members"], ["/audit", "Audit log"]] : []),
  ];
  const current = (path: string) => (path === "/" ? route.path === "/" || route.path.startsWith("/features") : route.path.startsWith(path));

  let content;
  if (error) content = <ErrorMessage error={error} />;
  else if (!apps) content = <p class="loading">Loading…</p>;
  else if (route.path === "/members" && isOwner) content = <Members self={member} />;
  else if (route.path === "/audit" && isOwner) content = <Audit />;
  else if (!app || !environment) content = <NoApps canWrite={canWrite} onCreated={(id) => (setScope({ appId: id }), void loadApps())} />;
  else {
    const context: Scope = { apps, app, environmentId: environment.id, member, canWrite, reloadApps: () => void loadApps() };
    const featureMatch = /^\/features\/(.+)$/.exec(route.path);
    if (featureMatch) content = <FeatureDetail scope={context} featureKey={decodeURIComponent(featureMatch[1]!)} />;
    else if (route.path === "/keys") content = <Keys scope={context} />;
    else if (route.path === "/events") content = <LiveEvents scope={context} />;
    else content = <Features scope={context} />;
  }

  return (
    <>
      <a class="skip" href="#main" onClick={(event) => (event.preventDefault(), document.getElementById("main")?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Switchyard</span>
        {apps && app && (
          <div class="switcher">
            <label>
              App
              <select value={app.id} onChange={(event) => setScope({ appId: (event.currentTarget as HTMLSelectElement).value })}>
                {apps.map((each) => (
                  <option value={each.id}>{each.name}</option>
                ))}
              </select>
            </label>
            <label>
              Environment
              <select value={environment?.id} onChange={(event) => setScope({ appId: app.id, environmentId: (event.currentTarget as HTMLSelectElement).value })}>
                {app.environments.map((each) => (
                  <option value={each.id}>{each.name}</option>
                ))}
              </select>
            </label>
          </div>
        )}
        <div class="who">
          <span>
            {member.email} <span class="badge">{member.role}</span>
          </span>
          <button type="button" class="secondary" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <nav class="side" aria-label="Sections">
        <ul>
          {nav.map(([path, label]) => (
            <li>
              <a href={`#${path}`} aria-current={current(path!) ? "page" : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {content}
      </main>
    </>
  );
}

function NoApps({ canWrite, onCreated }: { canWrite: boolean; onCreated(id: string): void }) {
  const [error, setError] = useState<unknown>();
  const submit = async (event: Event) => {
    event.preventDefault();
    const name = ((event.currentTarget as HTMLFormElement).elements.namedItem("name") as HTMLInputElement).value;
    try {
      const answer = await api<{ app: AppRecord }>("POST", "/admin/apps", { name });
      onCreated(answer.app.id);
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <section class="page">
      <h1>No apps yet</h1>
      {canWrite ? (
        <form onSubmit={submit} class="inline">
          <label>
            App name
            <input name="name" required />
          </label>
          <button type="submit">Create app</button>
          <ErrorMessage error={error} />
        </form>
      ) : (
        <p>Ask an editor or owner to create one.</p>
      )}
    </section>
  );
}
