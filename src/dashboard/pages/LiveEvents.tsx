import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { Scope } from "../scope";
import { enc, get } from "../api";
import { Card } from "../components/Card";
import { DataTable } from "../components/DataTable";
import { EntityLink } from "../components/EntityLink";
import { ErrorMessage, Page, when } from "../ui";

interface TrackedEvent {
  cursor: string;
  event: string;
  userId: string;
  companyId: string | null;
  attributes: Record<string, unknown> | null;
  timestamp: string;
  receivedAt?: string;
}

/**
 * When an entry arrived (the order the tail shows), and the time its sender gave it when that is another one: an
 * SDK's queued event sent today may be dated last week.
 */
function Arrived({ receivedAt, timestamp }: { receivedAt: string | undefined; timestamp: string }) {
  const arrived = receivedAt ?? timestamp;
  const dated = Math.abs(Date.parse(arrived) - Date.parse(timestamp)) > 60_000;
  return (
    <td>
      {when(arrived)}
      {dated && <div class="muted small">dated {when(timestamp)}</div>}
    </td>
  );
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
  receivedAt?: string;
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
        {paused ? "Paused." : "Following new events."} Newest first, in the order they arrived; the latest {KEEP} of each.
      </p>
      <TailCard
        id="events-title"
        title="Events"
        tail={events}
        columns={["Received", "Event", "User", "Company", "Attributes"]}
        row={(event) => (
          <>
            <Arrived receivedAt={event.receivedAt} timestamp={event.timestamp} />
            <td>{event.event}</td>
            <ConcernsCells entry={event} />
          </>
        )}
      />
      <TailCard
        id="updates-title"
        title="User and company updates"
        tail={updates}
        columns={["Received", "Update", "User", "Company", "Attributes"]}
        row={(update) => (
          <>
            <Arrived receivedAt={update.receivedAt} timestamp={update.timestamp} />
            <td>
              {update.type}
              {!update.active && <span class="muted small"> (inactive)</span>}
            </td>
            <ConcernsCells entry={update} />
          </>
        )}
      />
      <TailCard
        id="feature-events-title"
        title="Feature events"
        tail={featureEvents}
        columns={["Received", "Action", "Feature", "Result", "User", "Company"]}
        row={(event) => (
          <>
            <td>{when(event.receivedAt)}</td>
            <td>{event.action}</td>
            <td>
              <EntityLink kind="features" id={event.key} />
            </td>
            <td>
              <code>{JSON.stringify(event.evalResult ?? null)}</code>
            </td>
            <td>{String(event.evalContext?.user?.id ?? event.evalContext?.["user.id"] ?? "—")}</td>
            <td>{String(event.evalContext?.company?.id ?? event.evalContext?.["company.id"] ?? "—")}</td>
          </>
        )}
      />
    </Page>
  );
}

/** One log's tail in a card, with its count in the title. */
function TailCard<T extends { cursor: string }>({ id, title, tail, columns, row }: { id: string; title: string; tail: { items: T[] }; columns: string[]; row(item: T): ComponentChildren }) {
  return (
    <Card id={id} title={`${title} (${tail.items.length})`}>
      {/* Scrolls on its own, so every log stays in view; focusable, so a keyboard can scroll it too. */}
      <div class="tail" tabIndex={0} role="region" aria-labelledby={id}>
        <DataTable
          columns={columns}
          rows={tail.items}
          rowKey={(item) => item.cursor}
          row={row}
          empty={<p class="empty-inline">Nothing yet: entries appear here within a second of an SDK sending them with this environment's key.</p>}
        />
      </div>
    </Card>
  );
}

/**
 * The User, Company and Attributes cells of a tracked event or an entity update: both logs say whom an entry concerns
 * and what it sent the same way, so both tables end with the same columns.
 */
function ConcernsCells({ entry }: { entry: { userId: string | null; companyId: string | null; attributes: Record<string, unknown> | null } }) {
  return (
    <>
      <td>
        <EntityLink kind="users" id={entry.userId} />
      </td>
      <td>
        <EntityLink kind="companies" id={entry.companyId} />
      </td>
      <td>
        {entry.attributes && Object.keys(entry.attributes).length > 0 && <code class="small">{JSON.stringify(entry.attributes)}</code>}
      </td>
    </>
  );
}
