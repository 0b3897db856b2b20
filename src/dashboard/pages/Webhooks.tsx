/**
 * Webhooks of an app (API.md §16): the list, and a new webhook whose signing secret is shown here once. Each row
 * leads to the webhook's page (settings, test, rotation, its deliveries).
 */
import { useState } from "preact/hooks";
import type { Scope } from "../scope";
import { Card } from "../components/Card";
import { DataTable } from "../components/DataTable";
import { OneTimeSecret } from "../components/OneTimeSecret";
import { eventWords, WebhookForm } from "../components/WebhookForm";
import { ErrorMessage, Page, useLoad } from "../ui";
import { createWebhook, listWebhooks, type Webhook } from "../webhook-api";
import "./webhooks.css";

/** The environments a webhook hears, by name. */
export function environmentNames(scope: Scope, webhook: Webhook): string {
  if (webhook.environments.length === 0) return "Every environment";
  return webhook.environments.map((id) => scope.app.environments.find((environment) => environment.id === id)?.name ?? id).join(", ");
}

export function eventList(webhook: Webhook): string {
  return webhook.events.includes("*") ? "Every event" : webhook.events.map(eventWords).join(", ");
}

export const formatName = (webhook: Webhook): string => (webhook.format === "slack" ? "Slack" : "Standard Webhooks");

/** What shows where a webhook's name would be: its description, else its receiver's host. */
export function webhookName(webhook: Webhook): string {
  if (webhook.description) return webhook.description;
  try {
    return new URL(webhook.url).host;
  } catch {
    return webhook.url;
  }
}

export function Webhooks({ scope }: { scope: Scope }) {
  const webhooks = useLoad(() => listWebhooks(scope.app.id), [scope.app.id]);
  const [created, setCreated] = useState<{ webhook: Webhook; secret: string } | undefined>();
  const [adding, setAdding] = useState(false);
  return (
    <Page
      title="Webhooks"
      subtitle={`Every change of ${scope.app.name} where your team works: signed JSON for CI and your own receivers, or a message in a Slack channel.`}
      actions={
        scope.canWrite &&
        !adding && (
          <button type="button" onClick={() => (setAdding(true), setCreated(undefined))}>
            New webhook
          </button>
        )
      }
    >
      <ErrorMessage error={webhooks.error} />
      {created && (
        <OneTimeSecret value={created.secret} copyLabel="Copy signing secret">
          <strong>Webhook created: {webhookName(created.webhook)}.</strong> Its signing secret is shown only now: store it where your receiver checks
          signatures (docs/WEBHOOKS.md shows how). {created.webhook.format === "slack" && "Slack does not check it; keep it in case you switch the format. "}
          <a href={scope.link("webhooks", created.webhook.id)}>Open the webhook</a> to send a test event.
        </OneTimeSecret>
      )}
      {adding && (
        <Card id="new-webhook-title" title="New webhook">
          <WebhookForm
            environments={scope.app.environments}
            submitLabel="Create webhook"
            onCancel={() => setAdding(false)}
            onSubmit={async (fields) => {
              const answer = await createWebhook(scope.app.id, fields);
              setCreated(answer);
              setAdding(false);
              webhooks.reload();
            }}
          />
        </Card>
      )}
      <DataTable
        caption={`Webhooks of ${scope.app.name}`}
        columns={["Webhook", "Events", "Environments", "Format", "State"]}
        rows={webhooks.data}
        rowKey={(webhook) => webhook.id}
        row={(webhook) => (
          <>
            <th scope="row">
              <a href={scope.link("webhooks", webhook.id)}>{webhookName(webhook)}</a>
              <div class="muted small webhook-url">{webhook.url}</div>
            </th>
            <td>{eventList(webhook)}</td>
            <td>{environmentNames(scope, webhook)}</td>
            <td>{formatName(webhook)}</td>
            <td>
              <span class={webhook.enabled ? "state state-everyone" : "state state-off"}>{webhook.enabled ? "Enabled" : "Disabled"}</span>
            </td>
          </>
        )}
        empty={
          <div class="empty">
            <p>
              <strong>No webhooks yet.</strong> Add one to post each change (who turned what on, for whom, with the diff) to a Slack channel, a CI job or
              your own service.
            </p>
          </div>
        }
      />
    </Page>
  );
}
