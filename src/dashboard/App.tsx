import { useEffect, useRef, useState } from "preact/hooks";
import { abortPendingRequests, api, ApiError, get, SESSION_ENDED, setCsrfToken, type App as AppRecord, type Environment, type Member } from "./api";
import { FirstStart, ResetPassword, SignIn, type SignedIn } from "./pages/Auth";
import { GLOBAL_PAGE_VIEWS, SCOPED_NAV, SCOPED_PAGE_VIEWS } from "./page-table";
import { NewScope, NoApps } from "./new-scope";
import { currentPath, navigate, parseRoute, replaceRoute, scopedPath, useHashRoute } from "./router";
import { forgetSignedIn, isMarkedSignedIn, markSignedIn } from "./session";
import { ErrorMessage, Page } from "./ui";
import { ScopeContext, type FreshKeys, type Scope } from "./scope";


type Boot =
  | { state: "loading" }
  | { state: "failed"; error: unknown }
  | { state: "first-start" }
  | { state: "signed-out"; notice?: string }
  | { state: "signed-in"; member: Member };

export function App() {
  const [boot, setBoot] = useState<Boot>({ state: "loading" });
  const route = useHashRoute();

  const start = async () => {
    // Signed out (no marker), the page asks nothing that would fail: a failing request logs a console error (§9).
    if (isMarkedSignedIn()) {
      try {
        const session = await api<{ member: Member; csrfToken: string }>("GET", "/admin/session");
        setCsrfToken(session.csrfToken);
        return setBoot({ state: "signed-in", member: session.member });
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 401) return setBoot({ state: "failed", error });
        forgetSignedIn();
      }
    }
    try {
      const setup = await get<{ hasOwner: boolean }>("/admin/setup");
      setBoot(setup.hasOwner ? { state: "signed-out" } : { state: "first-start" });
    } catch (error) {
      setBoot({ state: "failed", error });
    }
  };
  useEffect(() => {
    void start();
  }, []);

  useEffect(() => {
    const ended = () => {
      setCsrfToken(undefined);
      forgetSignedIn();
      setBoot({ state: "signed-out", notice: "Your session ended: sign in again." });
    };
    addEventListener(SESSION_ENDED, ended);
    return () => removeEventListener(SESSION_ENDED, ended);
  }, []);

  const signedIn = (session: SignedIn) => {
    setCsrfToken(session.csrfToken);
    markSignedIn();
    setBoot({ state: "signed-in", member: session.member });
  };
  const signOut = async () => {
    // What the signed-in page still asks would be answered 401 once the session is gone.
    abortPendingRequests();
    await api("DELETE", "/admin/session").catch(() => undefined);
    setCsrfToken(undefined);
    forgetSignedIn();
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
          <h1>Switchyard cannot start</h1>
          <ErrorMessage error={boot.error} />
        </main>
      );
    case "first-start":
      return <FirstStart onSignedIn={signedIn} />;
    case "signed-out":
      return <SignIn onSignedIn={signedIn} notice={boot.notice} />;
    case "signed-in":
      return (
        <Shell
          member={boot.member}
          onSignOut={signOut}
          onExpired={() => (forgetSignedIn(), setBoot({ state: "signed-out", notice: "Your session ended: sign in again." }))}
        />
      );
  }
}

/** The app and environment shown last: `/dashboard/` alone opens them again. */
const STORED_SCOPE = "switchyard.scope";

function storedScope(): { appId?: string; environmentId?: string } {
  try {
    return JSON.parse(localStorage.getItem(STORED_SCOPE) ?? "{}") as { appId?: string; environmentId?: string };
  } catch {
    return {};
  }
}

function defaultScope(apps: AppRecord[]): { app: AppRecord; environment: Environment } | undefined {
  const stored = storedScope();
  const app = apps.find((each) => each.id === stored.appId) ?? apps[0];
  if (!app) return undefined;
  const environment =
    app.environments.find((each) => each.id === stored.environmentId) ?? app.environments.find((each) => each.id === app.defaultEnvironmentId) ?? app.environments[0];
  return environment && { app, environment };
}


function Shell({ member, onSignOut, onExpired }: { member: Member; onSignOut(): void; onExpired(): void }) {
  const route = useHashRoute();
  const parsed = parseRoute(route.path);
  const [apps, setApps] = useState<AppRecord[] | undefined>();
  const [error, setError] = useState<unknown>();
  const [fresh, setFreshKeys] = useState<Record<string, FreshKeys>>({});
  const [menuOpen, setMenuOpen] = useState(false);
  const loadApps = () =>
    get<{ apps: AppRecord[] }>("/admin/apps").then(
      (answer) => setApps(answer.apps),
      (caught: unknown) => (caught instanceof ApiError && caught.status === 401 ? onExpired() : setError(caught)),
    );
  useEffect(() => {
    void loadApps();
  }, []);
  // After moving to another page (not on first load), focus its heading so screen readers announce it.
  // A replaced URL (`/dashboard/` alone becoming its default app's) is the same page, not a move.
  const previousPath = useRef<string | undefined>(undefined);
  useEffect(() => {
    setMenuOpen(false);
    const previous = previousPath.current;
    previousPath.current = route.path;
    if (previous === undefined || previous === route.path || parseRoute(previous).kind === "default") return;
    requestAnimationFrame(() => document.getElementById("page-title")?.focus());
  }, [route.path]);

  // `/dashboard/` alone, or a link of the time before URLs named the app: the default app's URL replaces it.
  const fallback = apps ? defaultScope(apps) : undefined;
  useEffect(() => {
    // Read the URL as it is now: a navigation since this render (a new app's keys page) must not be replaced.
    const now = parseRoute(currentPath());
    if (now.kind === "default" && fallback) replaceRoute(scopedPath(fallback.app.id, fallback.environment.id, now.page, now.id));
  }, [route.path, fallback?.app.id, fallback?.environment.id]);

  const app = parsed.kind === "scoped" ? apps?.find((each) => each.id === parsed.appId) : parsed.kind === "global" ? fallback?.app : undefined;
  const environment = parsed.kind === "scoped" ? app?.environments.find((each) => each.id === parsed.environmentId) : parsed.kind === "global" ? fallback?.environment : undefined;
  useEffect(() => {
    if (parsed.kind === "scoped" && app && environment) localStorage.setItem(STORED_SCOPE, JSON.stringify({ appId: app.id, environmentId: environment.id }));
  }, [app?.id, environment?.id]);

  const canWrite = member.role !== "viewer";
  const isOwner = member.role === "owner";
  const setFresh = (environmentId: string, keys: FreshKeys | undefined) =>
    setFreshKeys((previous) => {
      const next = { ...previous };
      if (keys) next[environmentId] = keys;
      else delete next[environmentId];
      return next;
    });
  const created = (next: AppRecord | undefined, environmentId: string, keys: Record<string, FreshKeys>) => {
    setFreshKeys((previous) => ({ ...previous, ...keys }));
    void loadApps().then(() => next && navigate(scopedPath(next.id, environmentId, "keys")));
  };

  const scope: Scope | undefined =
    apps && app && environment
      ? { apps, app, environment, environmentId: environment.id, member, canWrite, reloadApps: () => void loadApps(), link: (page, id) => `#${scopedPath(app.id, environment.id, page, id)}`, fresh, setFresh }
      : undefined;

  let content;
  if (error) content = <ErrorMessage error={error} />;
  else if (!apps) content = <p class="loading">Loading…</p>;
  else if (parsed.kind === "global") {
    const global = GLOBAL_PAGE_VIEWS[parsed.page];
    content =
      global !== undefined && (isOwner || !global.ownersOnly) ? (
        global.show(apps, member)
      ) : (
        <NotFound title="Owners only" message="This page is for owners of this Switchyard." home={fallback && `#${scopedPath(fallback.app.id, fallback.environment.id)}`} />
      );
  }
  else if (apps.length === 0) content = <NoApps canWrite={canWrite} onCreated={created} />;
  else if (parsed.kind === "default") content = <p class="loading">Loading…</p>;
  else if (parsed.kind === "unknown") content = <NotFound title="No such page" message={`The dashboard has no page ${parsed.path}.`} home={fallback && `#${scopedPath(fallback.app.id, fallback.environment.id)}`} />;
  else if (!app) content = <NotFound title="App not found" message={`No app has the id ${parsed.appId}: it may have been deleted, or the link is mistyped.`} home={fallback && `#${scopedPath(fallback.app.id, fallback.environment.id)}`} />;
  else if (!environment || !scope)
    content = <NotFound title="Environment not found" message={`${app.name} has no environment with the id ${parsed.environmentId}.`} home={`#${scopedPath(app.id, app.defaultEnvironmentId)}`} />;
  else {
    const view = SCOPED_PAGE_VIEWS[parsed.page];
    content = parsed.id !== undefined && view.detail !== undefined ? view.detail(scope, parsed.id) : view.list(scope);
  }

  const page = parsed.kind === "scoped" ? parsed.page : undefined;
  const navScope = app && environment ? { app, environment } : fallback;
  const switchTo = (appId: string, environmentId: string) => {
    // Another environment of the same app keeps the page (a feature stays open); another app opens its features.
    if (parsed.kind === "scoped" && appId === parsed.appId) navigate(scopedPath(appId, environmentId, parsed.page, parsed.id));
    else navigate(scopedPath(appId, environmentId, "features"));
  };

  return (
    <ScopeContext.Provider value={scope}>
      <div class="shell">
        <a class="skip" href="#main" onClick={(event) => (event.preventDefault(), document.getElementById("main")?.focus())}>
          Skip to content
        </a>
        <header class="top">
          <a class="brand" href={navScope ? `#${scopedPath(navScope.app.id, navScope.environment.id)}` : "#/"}>
            <span class="brand-mark" aria-hidden="true" />
            Switchyard
          </a>
          {apps && apps.length > 0 && navScope && (
            <div class="switcher">
              <label>
                <span class="switcher-label">App</span>
                <select aria-label="App" value={navScope.app.id} onChange={(event) => {
                  const next = apps.find((each) => each.id === (event.currentTarget as HTMLSelectElement).value)!;
                  switchTo(next.id, next.defaultEnvironmentId);
                }}>
                  {apps.map((each) => (
                    <option value={each.id}>{each.name}</option>
                  ))}
                </select>
              </label>
              <label>
                <span class="switcher-label">Environment</span>
                <select aria-label="Environment" value={navScope.environment.id} onChange={(event) => switchTo(navScope.app.id, (event.currentTarget as HTMLSelectElement).value)}>
                  {navScope.app.environments.map((each) => (
                    <option value={each.id}>{each.name}</option>
                  ))}
                </select>
              </label>
              {canWrite && <NewScope app={navScope.app} onCreated={created} />}
            </div>
          )}
          <div class="who">
            <span class="who-email">
              {member.email} <span class="badge">{member.role}</span>
            </span>
            <button type="button" class="secondary" onClick={onSignOut}>
              Sign out
            </button>
          </div>
          <button type="button" class="menu-toggle secondary" aria-expanded={menuOpen} aria-controls="sections" onClick={() => setMenuOpen(!menuOpen)}>
            Menu
          </button>
        </header>
        <nav class={`side${menuOpen ? " open" : ""}`} id="sections" aria-label="Sections">
          <ul>
            {navScope &&
              SCOPED_NAV.map(([target, label]) => (
                <li>
                  <a href={`#${scopedPath(navScope.app.id, navScope.environment.id, target)}`} aria-current={page === target ? "page" : undefined}>
                    {label}
                  </a>
                </li>
              ))}
            <li>
              <a href="#/operations" aria-current={parsed.kind === "global" && parsed.page === "operations" ? "page" : undefined}>
                Backup and flags files
              </a>
            </li>
            {isOwner && (
              <>
                <li class="nav-heading" aria-hidden="true">
                  Administration
                </li>
                <li>
                  <a href="#/members" aria-current={parsed.kind === "global" && parsed.page === "members" ? "page" : undefined}>
                    Members
                  </a>
                </li>
                <li>
                  <a href="#/audit" aria-current={parsed.kind === "global" && parsed.page === "audit" ? "page" : undefined}>
                    Audit log
                  </a>
                </li>
              </>
            )}
          </ul>
        </nav>
        <main id="main" tabIndex={-1}>
          {scope && page && (
            <nav class="breadcrumb" aria-label="Breadcrumb">
              <ol>
                <li>{scope.app.name}</li>
                <li>{scope.environment.name}</li>
                <li>{parsed.kind === "scoped" && parsed.id !== undefined ? <a href={scope.link(page)}>{SCOPED_PAGE_VIEWS[page].label}</a> : <span aria-current="page">{SCOPED_PAGE_VIEWS[page].label}</span>}</li>
              </ol>
            </nav>
          )}
          {content}
        </main>
      </div>
    </ScopeContext.Provider>
  );
}

function NotFound({ title, message, home }: { title: string; message: string; home: string | undefined }) {
  return (
    <Page title={title}>
      <div class="empty">
        <p>{message}</p>
        {home && <a href={home}>Open the features of your default app</a>}
      </div>
    </Page>
  );
}
