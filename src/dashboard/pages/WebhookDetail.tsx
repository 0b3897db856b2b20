/**
 * One webhook (API.md §16): its settings and their edit, a test event, the secret's rotation (the new one shown once,
 * the old one signing beside it for a day), disabling and deleting, and its deliveries with every attempt.
 */
import { useState } from "preact/hooks";
import type { Scope } from "../scope";
import { Card } from "../components/Card";
import { useConfirm } from "../components/ConfirmDialog";
import { OneTimeSecret } from "../components/OneTimeSecret";
import { WebhookForm } from "../components/WebhookForm";
import { useAction } from "../hooks/useAction";
import { navigate } from "../router";
import { ErrorMessage, Page, useLoad, when } from "../ui";
import { deleteWebhook, getWebhook, rotateSecret, sendTest, updateWebhook, type Webhook } from "../webhook-api";
import { Deliveries } from "./WebhookDeliveries";
import { environmentNames, eventList, formatName, webhookName } from "./Webhooks";
import "./webhooks.css";

export function WebhookDetail({ scope, webhookId }: { scope: Scope; webhookId: string }) {
  const webhook = useLoad(() => getWebhook(scope.app.id, webhookId), [scope.app.id, webhookId]);
  const [secret, setSecret] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const [editing, setEditing] = useState(false);
  const [deliveriesTick, setDeliveriesTick] = useState(0);
  const acting = useAction();
  const confirm = useConfirm();
  const current = webhook.data;
  const title = current ? webhookName(current) : "Webhook";

  const act = (work: () => Promise<string>) =>
    acting.run(async () => {
      setNotice(await work());
      webhook.reload();
      setDeliveriesTick((tick) => tick + 1);
    });
  const test = () => act(async () => (await sendTest(scope.app.id, webhookId), "Test event queued: it shows in the deliveries below."));
  const rotate = async (hook: Webhook) => {
    const ok = await confirm.ask({
      title: `Rotate the signing secret of ${webhookName(hook)}?`,
      message: "A new secret is shown once. The old one keeps signing beside it for 24 hours, so your receiver can switch without losing a delivery.",
      confirm: "Rotate secret",
    });
    if (!ok) return;
    await act(async () => {
      const answer = await rotateSecret(scope.app.id, webhookId);
      setSecret(answer.secret);
      return "Secret rotated.";
    });
  };
  const toggle = async (hook: Webhook) => {
    if (hook.enabled) {
      const ok = await confirm.ask({ title: `Disable ${webhookName(hook)}?`, message: "It sends nothing more until enabled again; deliveries waiting now are cancelled.", confirm: "Disable webhook", danger: true });
      if (!ok) return;
    }
    await act(async () => {
      const answer = await updateWebhook(scope.app.id, webhookId, { enabled: !hook.enabled });
      const cancelled = answer.cancelledDeliveries ?? 0;
      return hook.enabled ? `Webhook disabled${cancelled > 0 ? `; ${cancelled} waiting ${cancelled === 1 ? "delivery" : "deliveries"} cancelled` : ""}.` : "Webhook enabled.";
    });
  };
  const remove = async (hook: Webhook) => {
    const ok = await confirm.ask({ title: `Delete ${webhookName(hook)}?`, message: "It sends nothing more, its waiting deliveries are cancelled and its delivery history goes with it.", confirm: "Delete webhook", danger: true });
    if (!ok) return;
    await acting.run(async () => {
      await deleteWebhook(scope.app.id, webhookId);
      navigate(scope.link("webhooks").slice(1));
    });
  };

  return (
    <Page title={title} subtitle={<a href={scope.link("webhooks")}>All webhooks of {scope.app.name}</a>}>
      {confirm.dialog}
      <ErrorMessage error={webhook.error ?? acting.error} />
      <div aria-live="polite" class="notice-slot">
        {notice && <p class="success">{notice}</p>}
      </div>
      <OneTimeSecret value={secret} copyLabel="Copy new signing secret">
        <strong>The new signing secret, shown only now.</strong> Give it to your receiver; the old one signs beside it until{" "}
        {when(current?.previousSecretUntil)}.
      </OneTimeSecret>
      {current && (
        <Card id="webhook-settings-title" title="Settings">
          {editing ? (
            <WebhookForm
              environments={scope.app.environments}
              initial={current}
              submitLabel="Save webhook"
              onCancel={() => setEditing(false)}
              onSubmit={async (fields) => {
                const changed = Object.fromEntries(Object.entries(fields).filter(([name, value]) => JSON.stringify(value) !== JSON.stringify(current[name as keyof typeof fields])));
                await updateWebhook(scope.app.id, webhookId, changed);
                setEditing(false);
                setNotice("Webhook saved.");
                webhook.reload();
              }}
            />
          ) : (
            <>
              <dl class="webhook-settings">
                <dt>Receiver URL</dt>
                <dd class="webhook-url">{current.url}</dd>
                <dt>State</dt>
                <dd>
                  <span class={current.enabled ? "state state-everyone" : "state state-off"}>{current.enabled ? "Enabled" : "Disabled"}</span>
                </dd>
                <dt>Events</dt>
                <dd>{eventList(current)}</dd>
                <dt>Environments</dt>
                <dd>{environmentNames(scope, current)}</dd>
                <dt>Format</dt>
                <dd>{formatName(current)}</dd>
                <dt>Created</dt>
                <dd>{when(current.createdAt)}</dd>
                {current.previousSecretUntil && (
                  <>
                    <dt>Previous secret</dt>
                    <dd>signs beside the new one until {when(current.previousSecretUntil)}</dd>
                  </>
                )}
              </dl>
              {scope.canWrite && (
                <div class="actions">
                  <button type="button" disabled={acting.busy || !current.enabled} onClick={() => void test()}>
                    Send test event
                  </button>
                  <button type="button" class="secondary" onClick={() => setEditing(true)}>
                    Edit settings
                  </button>
                  <button type="button" class="secondary" disabled={acting.busy} onClick={() => void rotate(current)}>
                    Rotate secret
                  </button>
                  <button type="button" class="secondary" disabled={acting.busy} onClick={() => void toggle(current)}>
                    {current.enabled ? "Disable" : "Enable"}
                  </button>
                  <button type="button" class="secondary danger" disabled={acting.busy} onClick={() => void remove(current)}>
                    Delete webhook
                  </button>
                </div>
              )}
            </>
          )}
        </Card>
      )}
      {current && <Deliveries key={deliveriesTick} scope={scope} webhook={current} />}
    </Page>
  );
}
