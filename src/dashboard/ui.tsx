import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiError } from "./api";

/** An API error as the page shows it: never swallowed, with its code and each field's message. */
export function ErrorMessage({ error }: { error: unknown }) {
  if (!error) return null;
  const apiError = error instanceof ApiError ? error : undefined;
  return (
    <div class="error" role="alert">
      <strong>{apiError ? apiError.code : "Error"}</strong>: {(error as Error).message}
      {apiError && apiError.validationErrors.length > 0 && (
        <ul>
          {apiError.validationErrors.map((issue) => (
            <li>
              <code>{issue.path || "body"}</code>: {issue.message}
            </li>
          ))}
        </ul>
      )}
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

export function Page({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · Switchyard`;
  }, [title]);
  return (
    <section class="page" aria-labelledby="page-title">
      <div class="page-head">
        <h1 id="page-title" tabIndex={-1}>
          {title}
        </h1>
        {actions}
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
