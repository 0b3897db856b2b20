import { useEffect, useRef, useState } from "preact/hooks";
import type { Scope } from "../App";
import { enc, get } from "../api";
import { ErrorMessage, Page, when } from "../ui";

interface TrackedEvent {
  cursor: string;
  event: string;
  userId: string;
  companyId: string | null;
  attributes: Record<string, unknown> | null;
  timestamp: string;
}

/** One /user or /company call as received (docs/API.md §9's entity-updates log). */
interface EntityUpdate {
  cursor: string;
  type: "user" | "company";
  userId: string | null;
  companyId: string | null;
  attributes: Record<string, unknown> | null;
  active: boolean;
  timestamp: string;
}

interface FeatureEvent {
  cursor: string;
  action: string;
  key: string;
  evalContext: Record<string, any> | null;
  evalResult: unknown;
  receivedAt: string;
}

const KEEP = 200;
const POLL_MS = 1000;
const PAGE = 1000;

/**
 * The newest entries of one append log (API.md §6), polled from the last cursor: from the newest KEEP (docs/API.md §9's
 * log tails) up to the end, then once a second. Holds at most KEEP entries, newest first.
 */
function useTail<T extends { cursor: string }>(path: string, field: string, paused: boolean): { items: T[]; error: unknown } {
  const [items, setItems] = useState<T[]>([]);
  const [error, setError] = useState<unknown>();
  const cursor = useRef<string | undefined>(undefined);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;
  useEffect(() => {
    let live = true;
    cursor.current = undefined;
    setItems([]);
    const pull = async () => {
      // Start at the newest KEEP entries, not at the beginning of a log that may hold millions.
      if (cursor.current === undefined) {
        const tails = await get<{ tails: Record<string, string> }>(`${path.slice(0, path.lastIndexOf("/"))}/log-tails?entries=${KEEP}`);
        if (!live) return;
        cursor.current = tails.tails[field];
      }
      for (;;) {
        const query = new URLSearchParams({ limit: String(PAGE) });
        if (cursor.current) query.set("after", cursor.current);
        const page = await get<Record<string, any>>(`${path}?${query}`);
        if (!live) return;
        const got = page[field] as T[];
        cursor.current = page.next as string;
        if (got.length > 0) setItems((previous) => [...got.slice(-KEEP).reverse(), ...previous].slice(0, KEEP));
        if (got.length < PAGE) return;
      }
    };
    void (async () => {
      while (live) {
        if (!pausedRef.current) {
          try {
            await pull();
            setError(undefined);
          } catch (caught) {
            if (live) setError(caught);
          }
        }
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    })();
    return () => {
      live = false;
    };
  }, [path]);
  return { items, error };
}

/** A tail of tracked events, user and company updates, and feature events as they arrive; pausable. */
export function LiveEvents({ scope }: { scope: Scope }) {
  const [paused, setPaused] = useState(false);
  const base = `/admin/environments/${enc(scope.environmentId)}`;
  const events = useTail<TrackedEvent>(`${base}/events`, "events", paused);
  const updates = useTail<EntityUpdate>(`${base}/entity-updates`, "updates", paused);
  const featureEvents = useTail<FeatureEvent>(`${base}/feature-events`, "featureEvents", paused);
  return (
    <Page
      title="Live events"
      actions={
        <button type="button" class="secondary" aria-pressed={paused} onClick={() => setPaused(!paused)}>
          {paused ? "Resume" : "Pause"}
        </button>
      }
    >
      <ErrorMessage error={events.error ?? updates.error ?? featureEvents.error} />
      <p class="muted" aria-live="polite">
        {paused ? "Paused." : "Following new events."} Showing the latest {KEEP} of each.
      </p>
      <section class="card" aria-labelledby="events-title">
        <h2 id="events-title">Events ({events.items.length})</h2>
        {/* Scrolls on its own, so both logs stay in view; focusable, so a keyboard can scroll it too. */}
        <div class="tail" tabIndex={0} role="region" aria-labelledby="events-title">
        <table class="list">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Event</th>
              <th scope="col">User</th>
              <th scope="col">Company</th>
              <th scope="col">Attributes</th>
            </tr>
          </thead>
          <tbody>
            {events.items.map((event) => (
              <tr key={event.cursor}>
                <td>{when(event.timestamp)}</td>
                <td>{event.event}</td>
                <td>
                  <a href={`#/users/${enc(event.userId)}`}>{event.userId}</a>
                </td>
                <td>{event.companyId ? <a href={`#/companies/${enc(event.companyId)}`}>{event.companyId}</a> : "—"}</td>
                <td>
                  <code class="small">{event.attributes ? JSON.stringify(event.attributes) : ""}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        </div>
      </section>
      <section class="card" aria-labelledby="updates-title">
        <h2 id="updates-title">User and company updates ({updates.items.length})</h2>
        <div class="tail" tabIndex={0} role="region" aria-labelledby="updates-title">
        <table class="list">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Update</th>
              <th scope="col">User</th>
              <th scope="col">Company</th>
              <th scope="col">Attributes</th>
            </tr>
          </thead>
          <tbody>
            {updates.items.map((update) => (
              <tr key={update.cursor}>
                <td>{when(update.timestamp)}</td>
                <td>
                  {update.type}
                  {!update.active && <span class="muted small"> (inactive)</span>}
                </td>
                <td>{update.userId ? <a href={`#/users/${enc(update.userId)}`}>{update.userId}</a> : "—"}</td>
                <td>{update.companyId ? <a href={`#/companies/${enc(update.companyId)}`}>{update.companyId}</a> : "—"}</td>
                <td>
                  <code class="small">{update.attributes ? JSON.stringify(update.attributes) : ""}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        </div>
      </section>
      <section class="card" aria-labelledby="feature-events-title">
        <h2 id="feature-events-title">Feature events ({featureEvents.items.length})</h2>
        <div class="tail" tabIndex={0} role="region" aria-labelledby="feature-events-title">
        <table class="list">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Action</th>
              <th scope="col">Feature</th>
              <th scope="col">Result</th>
              <th scope="col">User</th>
              <th scope="col">Company</th>
            </tr>
          </thead>
          <tbody>
            {featureEvents.items.map((event) => (
              <tr key={event.cursor}>
                <td>{when(event.receivedAt)}</td>
                <td>{event.action}</td>
                <td>{event.key}</td>
                <td>
                  <code>{JSON.stringify(event.evalResult ?? null)}</code>
                </td>
                <td>{String(event.evalContext?.user?.id ?? event.evalContext?.["user.id"] ?? "—")}</td>
                <td>{String(event.evalContext?.company?.id ?? event.evalContext?.["company.id"] ?? "—")}</td>
              </tr>
            ))}
          </tbody>
        </table>
        </div>
      </section>
    </Page>
  );
}
