import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiError } from "./api";

/** Sentences for the codes a person meets most, where the service's own message is written for a developer. */
const PLAIN: Record<string, string> = {
  NETWORK: "Switchyard did not answer: check that the service is running and your connection.",
  INVALID_CREDENTIALS: "The email or password is not right.",
  RATE_LIMITED: "Too many tries in a short time: wait a few minutes and try again.",
  FORBIDDEN: "Your role does not allow this: ask an owner.",
  APPROVAL_REQUIRED: "This environment requires approval for that change: propose it as a change request from the feature's page, or ask an owner, who may write it with a reason.",
};

/**
 * An API error as the page shows it: a sentence first, the code after it (for a search or a bug report), never
 * swallowed. `issues` lists each field's message too; a form that shows them at their fields passes false.
 */
export function ErrorMessage({ error, issues = true }: { error: unknown; issues?: boolean }) {
  if (!error) return null;
  const apiError = error instanceof ApiError ? error : undefined;
  const sentence = (apiError && PLAIN[apiError.code]) ?? (error as Error).message;
  return (
    <div class="error" role="alert">
      <span class="error-icon" aria-hidden="true">!</span>
      <div>
        {sentence}
        {apiError && apiError.code !== "UNEXPECTED" && <span class="error-code"> ({apiError.code})</span>}
        {issues && apiError && apiError.validationErrors.length > 0 && (
          <ul>
            {apiError.validationErrors.map((issue) => (
              <li>
                <code>{issue.path || "body"}</code>: {issue.message}
              </li>
            ))}
          </ul>
        )}
      </div>
    </div>
  );
}

/** Loads data for a page; `reload` runs it again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: unknown; loading: boolean; reload(): void } {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: undefined, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => live && setState({ data, error: undefined, loading: false }),
      (error: unknown) => live && setState({ data: undefined, error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((value) => value + 1), []);
  return { ...state, reload };
}

export function Page({ title, children, actions, subtitle, titleExtra }: { title: string; children: ComponentChildren; actions?: ComponentChildren; subtitle?: ComponentChildren; titleExtra?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · Switchyard`;
  }, [title]);
  return (
    <section class="page" aria-labelledby="page-title">
      <div class="page-head">
        <div class="page-title">
          <h1 id="page-title" tabIndex={-1}>
            {title}
          </h1>
          {titleExtra}
          {subtitle && <p class="muted subtitle">{subtitle}</p>}
        </div>
        {actions && <div class="page-actions">{actions}</div>}
      </div>
      {children}
    </section>
  );
}

export function when(at: string | null | undefined): string {
  if (!at) return "—";
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? at : date.toLocaleString();
}

export function actorName(actor: { kind: string; id: string; email?: string } | null | undefined): string {
  if (!actor) return "—";
  if (actor.kind === "admin") return "admin token";
  return actor.email ?? actor.id;
}
