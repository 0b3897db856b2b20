/**
 * A webhook's deliveries, newest first, each with every attempt (when, the receiver's status, how long, the error)
 * and a redeliver button once it is settled. While one is pending the list reads itself again every few seconds.
 */
import { useEffect, useState } from "preact/hooks";
import type { Scope } from "../scope";
import { Card } from "../components/Card";
import { DataTable } from "../components/DataTable";
import { useAction } from "../hooks/useAction";
import { ErrorMessage, useLoad, when } from "../ui";
import { listDeliveries, redeliver, type Delivery, type Webhook } from "../webhook-api";
import { eventWords } from "../components/WebhookForm";

const REFRESH_WHILE_PENDING_MS = 2000;

const STATE_CLASS: Record<Delivery["state"], string> = { delivered: "state state-everyone", pending: "state state-some", failed: "state state-failed" };

function Attempts({ delivery }: { delivery: Delivery }) {
  if (delivery.attempts.length === 0) return <span class="muted">{delivery.cancelled ? `Not sent: ${delivery.cancelled}` : "Not attempted yet"}</span>;
  return (
    <ol class="webhook-attempts">
      {delivery.attempts.map((attempt) => (
        <li>
          <time dateTime={attempt.at}>{when(attempt.at)}</time>
          {" · "}
          {attempt.status === null ? <span>no answer</span> : <span>HTTP {attempt.status}</span>}
          {" · "}
          {attempt.durationMs} ms
          {attempt.error && <div class="webhook-attempt-error">{attempt.error}</div>}
        </li>
      ))}
    </ol>
  );
}

export function Deliveries({ scope, webhook }: { scope: Scope; webhook: Webhook }) {
  const deliveries = useLoad(() => listDeliveries(scope.app.id, webhook.id), [scope.app.id, webhook.id]);
  const redelivering = useAction();
  const [notice, setNotice] = useState<string | undefined>();
  const pending = deliveries.data?.some((delivery) => delivery.state === "pending") ?? false;
  useEffect(() => {
    if (!pending || deliveries.loading) return;
    const timer = setTimeout(deliveries.reload, REFRESH_WHILE_PENDING_MS);
    return () => clearTimeout(timer);
  }, [pending, deliveries.loading, deliveries.data]);
  const again = (delivery: Delivery) =>
    redelivering.run(async () => {
      await redeliver(scope.app.id, webhook.id, delivery.id);
      setNotice(`${eventWords(delivery.type)} queued again, with the same webhook-id.`);
      deliveries.reload();
    });
  return (
    <Card id="webhook-deliveries-title" title="Deliveries">
      <div class="row-actions">
        <p class="muted small">Newest first. A delivery is retried with growing pauses for at least a day; the next one of this webhook waits for it.</p>
        <button type="button" class="secondary" disabled={deliveries.loading} onClick={deliveries.reload}>
          Refresh deliveries
        </button>
      </div>
      <ErrorMessage error={deliveries.error ?? redelivering.error} />
      <div aria-live="polite" class="notice-slot">
        {notice && <p class="success">{notice}</p>}
      </div>
      <DataTable
        caption="Deliveries of this webhook"
        columns={["Event", "State", "Attempts", "Next attempt", { label: "Actions", hidden: true }]}
        rows={deliveries.data}
        rowKey={(delivery) => delivery.id}
        row={(delivery) => (
          <>
            <th scope="row">
              {eventWords(delivery.type)}
              <div class="muted small">
                <code>{delivery.id}</code>
              </div>
              {delivery.event !== undefined && (
                <details class="webhook-payload">
                  <summary>Event JSON</summary>
                  {/* Focusable: a keyboard scrolls a long payload too. */}
                  <pre tabIndex={0}>{JSON.stringify(delivery.event, null, 2)}</pre>
                </details>
              )}
            </th>
            <td>
              <span class={STATE_CLASS[delivery.state]}>{delivery.state}</span>
            </td>
            <td>
              <Attempts delivery={delivery} />
            </td>
            <td>{delivery.state === "pending" ? when(delivery.nextAttemptAt) : "—"}</td>
            <td>
              {scope.canWrite && delivery.state !== "pending" && (
                <button type="button" class="secondary" disabled={redelivering.busy || !webhook.enabled} onClick={() => void again(delivery)}>
                  Redeliver<span class="visually-hidden"> {eventWords(delivery.type)} {delivery.id}</span>
                </button>
              )}
            </td>
          </>
        )}
        empty={<p class="empty-inline">No deliveries yet: send a test event, or change a feature this webhook listens to.</p>}
      />
    </Card>
  );
}
