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

const KEEP = 200;
const POLL_MS = 1000;

/** A tail of `/admin/environments/:envId/events` (API.md §6), polled from the last cursor; pausable. */
export function LiveEvents({ scope }: { scope: Scope }) {
  const [events, setEvents] = useState<TrackedEvent[]>([]);
  const [paused, setPaused] = useState(false);
  const [error, setError] = useState<unknown>();
  const cursor = useRef<string | undefined>(undefined);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;

  useEffect(() => {
    let live = true;
    cursor.current = undefined;
    setEvents([]);
    const pull = async () => {
      // Catch up page by page, then wait: an empty page means caught up.
      for (;;) {
        const query = new URLSearchParams({ limit: "1000" });
        if (cursor.current) query.set("after", cursor.current);
        const page = await get<{ events: TrackedEvent[]; next: string }>(`/admin/environments/${enc(scope.environmentId)}/events?${query}`);
        if (!live) return;
        cursor.current = page.next;
        if (page.events.length > 0) setEvents((previous) => [...page.events.slice(-KEEP).reverse(), ...previous].slice(0, KEEP));
        if (page.events.length < 1000) return;
      }
    };
    const loop = async () => {
      while (live) {
        if (!pausedRef.current) {
          try {
            await pull();
            setError(undefined);
          } catch (caught) {
            setError(caught);
          }
        }
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    };
    void loop();
    return () => {
      live = false;
    };
  }, [scope.environmentId]);

  return (
    <Page
      title="Live events"
      actions={
        <button type="button" class="secondary" aria-pressed={paused} onClick={() => setPaused(!paused)}>
          {paused ? "Resume" : "Pause"}
        </button>
      }
    >
      <ErrorMessage error={error} />
      <p class="muted" aria-live="polite">
        {paused ? "Paused." : "Following new events."} Showing the latest {events.length} (at most {KEEP}).
      </p>
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
          {events.map((event) => (
            <tr key={event.cursor}>
              <td>{when(event.timestamp)}</td>
              <td>{event.event}</td>
              <td>{event.userId}</td>
              <td>{event.companyId ?? "—"}</td>
              <td>
                <code class="small">{event.attributes ? JSON.stringify(event.attributes) : ""}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Page>
  );
}
