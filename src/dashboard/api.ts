/** The management API (API.md §6, §8) from the signed-in browser: the session cookie, and the CSRF token on writes. */
import type { InferOutput } from "valibot";
import type { PutFeatureBody } from "../schemas/admin";

export interface ValidationIssue {
  path: string;
  message: string;
}

/** An error envelope of API.md §2, kept whole so a page can show each validation message at its field. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly validationErrors: ValidationIssue[] = [],
  ) {
    super(message);
  }
}

let csrfToken: string | undefined;

/** Dispatched on `window` when a request of a signed-in page is answered 401. */
export const SESSION_ENDED = "switchyard:session-ended";

export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

type Json = Record<string, any>;

/** Requests on their way: signing out cancels them, or they would come back 401 and log console errors (§9). */
const inFlight = new Set<AbortController>();

export function abortPendingRequests(): void {
  for (const controller of inFlight) controller.abort();
  inFlight.clear();
}

export async function api<T = Json>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const sent: Record<string, string> = { accept: "application/json", ...headers };
  if (body !== undefined) sent["content-type"] = "application/json";
  if (method !== "GET" && csrfToken && !sent.authorization) sent["x-csrf-token"] = csrfToken;
  let response: Response;
  let text: string;
  const controller = new AbortController();
  inFlight.add(controller);
  try {
    response = await fetch(path, { method, headers: sent, credentials: "same-origin", body: body === undefined ? undefined : JSON.stringify(body), signal: controller.signal });
    text = await response.text();
  } catch (error) {
    if (controller.signal.aborted) throw new ApiError(0, "ABORTED", "Cancelled: signed out.");
    throw new ApiError(0, "NETWORK", `The service did not answer: ${(error as Error).message}`);
  } finally {
    inFlight.delete(controller);
  }
  let parsed: Json | undefined;
  try {
    parsed = text ? (JSON.parse(text) as Json) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok || !parsed || parsed.success !== true) {
    const error = parsed?.error as Json | undefined;
    // A signed-in page whose session ended (idle, absolute limit, removed member): the app returns to sign-in.
    if (response.status === 401 && csrfToken && !sent.authorization) dispatchEvent(new Event(SESSION_ENDED));
    throw new ApiError(response.status, error?.code ?? "UNEXPECTED", error?.message ?? `HTTP ${response.status}`, error?.validationErrors ?? []);
  }
  return parsed as T;
}

export const get = <T = Json>(path: string) => api<T>("GET", path);
export const enc = encodeURIComponent;

export interface Member {
  id: string;
  email: string;
  name: string;
  role: "owner" | "editor" | "viewer";
  createdAt: string;
}

export interface Environment {
  id: string;
  name: string;
  publishableKey: string;
  secretKey: string;
  flagStateVersion: number;
}

export interface App {
  id: string;
  name: string;
  trackingKey: string;
  defaultEnvironmentId: string;
  environments: Environment[];
}

/** The fields a feature's PUT takes, from the server's schema (type-only), so the two cannot drift apart. */
type FeatureFields = Required<InferOutput<typeof PutFeatureBody>>;

/** A feature as §6 presents it. */
export interface Feature {
  key: string;
  id: string;
  /** The display name (the key when none was given). */
  name: string;
  description: FeatureFields["description"];
  link: FeatureFields["link"];
  /** The release stage's name, or a label of a feature made before labels resolved to stages. */
  stage: FeatureFields["stage"];
  /** The app release stage the feature is in (API.md §10), null when none. */
  stageId?: string | null;
  createdAt: string;
  optInEnabled: FeatureFields["optInEnabled"];
  usageEvents?: FeatureFields["usageEvents"];
}

export interface Actor {
  kind: string;
  id: string;
  email?: string;
}

export interface EnvironmentFeature extends Feature {
  /** `rules` as served (segments inlined); `segmentRules` as saved, when they name segments. */
  targeting: { version: number; rules: { filter: unknown }[]; segmentRules?: { filter: unknown }[] };
  config: { version: number; variants: { filter: unknown; key: string; payload: unknown }[] };
  lastChange: { at: string; kind: "targeting" | "config" | "enabled" | "settings"; version: number | null; actor: Actor | null } | null;
  /** The kill switch (docs/API.md §15): false holds it off for everyone in this environment, its rules kept. */
  enabled: boolean;
  /** The MCP list_flags verdict (docs/API.md §12): a candidate for removing from the code. */
  stale: boolean;
  staleReason: "unevaluated" | "constant" | null;
}

export interface HistoryVersion {
  /** `enabled`: a kill-switch entry (docs/API.md §15), `enabled` its new position. */
  kind: "targeting" | "config" | "enabled";
  version: number;
  enabled?: boolean;
  comment?: string;
  changeRequestId?: string;
  rules?: { filter: unknown }[];
  segmentRules?: { filter: unknown }[];
  variants?: unknown[];
  at: string;
  actor?: Actor;
}
