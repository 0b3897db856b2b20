/** The management API (API.md §6, §8) from the signed-in browser: the session cookie, and the CSRF token on writes. */

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

export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

type Json = Record<string, any>;

export async function api<T = Json>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const sent: Record<string, string> = { accept: "application/json", ...headers };
  if (body !== undefined) sent["content-type"] = "application/json";
  if (method !== "GET" && csrfToken && !sent.authorization) sent["x-csrf-token"] = csrfToken;
  let response: Response;
  try {
    response = await fetch(path, { method, headers: sent, credentials: "same-origin", body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (error) {
    throw new ApiError(0, "NETWORK", `The service did not answer: ${(error as Error).message}`);
  }
  const text = await response.text();
  let parsed: Json | undefined;
  try {
    parsed = text ? (JSON.parse(text) as Json) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok || !parsed || parsed.success !== true) {
    const error = parsed?.error as Json | undefined;
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

export interface Feature {
  key: string;
  id: string;
  name?: string;
  description: string | null;
  link: string | null;
  stage: string | null;
  createdAt: string;
  optInEnabled: boolean;
}

export interface Actor {
  kind: string;
  id: string;
  email?: string;
}

export interface EnvironmentFeature extends Feature {
  targeting: { version: number; rules: { filter: unknown }[] };
  config: { version: number; variants: { filter: unknown; key: string; payload: unknown }[] };
  lastChange: { at: string; kind: string; version: number; actor: Actor | null } | null;
}

export interface HistoryVersion {
  kind: "targeting" | "config";
  version: number;
  rules?: { filter: unknown }[];
  variants?: unknown[];
  at: string;
  actor?: Actor;
}
