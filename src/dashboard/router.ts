import { useEffect, useState } from "preact/hooks";

/**
 * Views live after `#` (one HTML file serves every page and the server needs no fallback). The URLs are a contract
 * (docs/API.md §9): every page of an app names its app and environment,
 * `#/apps/{appId}/environments/{envId}/<page>[/<id>]`; pages of no app are `#/<page>`.
 */
export interface HashRoute {
  path: string;
  query: URLSearchParams;
}

/** Dispatched when the route changes without a hashchange event (a replaced URL). */
const ROUTE_REPLACED = "switchyard:route-replaced";

/** The route's path in the address bar at this moment. */
export const currentPath = (): string => read().path;

function read(): HashRoute {
  const hash = location.hash.replace(/^#/, "") || "/";
  const [path = "/", query = ""] = hash.split("?");
  return { path: path || "/", query: new URLSearchParams(query) };
}

export function useHashRoute(): HashRoute {
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = () => setRoute(read());
    addEventListener("hashchange", onChange);
    addEventListener(ROUTE_REPLACED, onChange);
    return () => {
      removeEventListener("hashchange", onChange);
      removeEventListener(ROUTE_REPLACED, onChange);
    };
  }, []);
  return route;
}

/** Goes to a page as a new history entry (back returns here). */
export function navigate(path: string): void {
  location.hash = path;
}

/** Shows a page in place of the current history entry (`/dashboard/` alone becomes its default app's URL). */
export function replaceRoute(path: string): void {
  history.replaceState(history.state, "", `#${path}`);
  dispatchEvent(new Event(ROUTE_REPLACED));
}

/** The pages of one app's environment; those with a second segment show one item of their list. */
export const SCOPED_PAGES = ["features", "change-requests", "keys", "settings", "companies", "users", "feedback", "events", "segments", "stages", "surveys", "rollouts", "webhooks"] as const;
export type ScopedPage = (typeof SCOPED_PAGES)[number];

export type ParsedRoute =
  | { kind: "scoped"; appId: string; environmentId: string; page: ScopedPage; id?: string }
  | { kind: "global"; page: "audit" | "members" | "reset-password" | "operations" }
  /** `/` or a pre-§9 link (`#/features/huddle`): the default app and environment, then that page. */
  | { kind: "default"; page: ScopedPage; id?: string }
  | { kind: "unknown"; path: string };

const decode = (segment: string): string => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

const isScopedPage = (page: string | undefined): page is ScopedPage => (SCOPED_PAGES as readonly string[]).includes(page ?? "");

export function parseRoute(path: string): ParsedRoute {
  const parts = path.split("/").filter(Boolean);
  if (parts.length === 0) return { kind: "default", page: "features" };
  if (parts[0] === "apps" && parts[2] === "environments" && parts.length >= 4) {
    const page = parts[4] ?? "features";
    if (!isScopedPage(page) || parts.length > 6) return { kind: "unknown", path };
    return { kind: "scoped", appId: decode(parts[1]!), environmentId: decode(parts[3]!), page, ...(parts[5] !== undefined ? { id: decode(parts[5]) } : {}) };
  }
  if (parts.length === 1 && (parts[0] === "audit" || parts[0] === "members" || parts[0] === "reset-password" || parts[0] === "operations")) return { kind: "global", page: parts[0] };
  if (isScopedPage(parts[0]) && parts.length <= 2) return { kind: "default", page: parts[0], ...(parts[1] !== undefined ? { id: decode(parts[1]) } : {}) };
  return { kind: "unknown", path };
}

/** The path of a page of one app's environment (without the leading `#`). */
export function scopedPath(appId: string, environmentId: string, page: ScopedPage = "features", id?: string): string {
  const base = `/apps/${encodeURIComponent(appId)}/environments/${encodeURIComponent(environmentId)}/${page}`;
  return id === undefined ? base : `${base}/${encodeURIComponent(id)}`;
}
