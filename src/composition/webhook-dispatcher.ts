/**
 * Sends the webhook outbox (API.md §16), no cron: a pass over every webhook's queue head whenever a change was
 * applied (every node hears every change), when a retry falls due, and on a short poll (feedback's deliveries are
 * queued by the projector's thread). Each webhook's head is attempted by one node at a time: the node first claims
 * the webhook through the management log (a lease whose expiry it decided before submitting; the first claim in log
 * order wins, a dead node's lease runs out and another node claims), then records the attempt's result through the
 * log too, extending its lease. Attempts of different webhooks run concurrently, at most `maxInFlight` at once; one
 * webhook's attempts run one after another, so a delivery being retried holds the later ones of its webhook.
 */
import type { Logger } from "../observability/logger.js";
import type { ManagementLog } from "../management/management-log.js";
import type { ChangeBodies, ChangeOf, ChangeResults } from "../management/changes.js";
import { newEnvelope } from "../management/envelope.js";
import { outcomeOf, retryDelayMs } from "../management/webhooks/retry-schedule.js";
import { postPolicy, sendDelivery, type AttemptResult, type SafePostPolicy } from "../management/webhooks/send-delivery.js";
import { ConfigError, type Config } from "../config/config.js";
import type { DeliveryRecord, WebhookRecord } from "../management/webhooks/webhook-records.js";
import { WebhookRepository } from "../management/webhooks/webhook-repository.js";
import type { KvStore } from "../storage/kv.js";

/** How often the queues are looked at even when nothing announced a change. */
const POLL_MS = 500;
/** A claimed lease must outlast an attempt and the submission of its result by this margin. */
const LEASE_MARGIN_MS = 5000;

export interface DispatcherOptions {
  nodeId: string;
  maxInFlight: number;
  timeoutMs: number;
  retryBaseMs: number;
  send(webhook: WebhookRecord, delivery: DeliveryRecord): Promise<AttemptResult>;
}

export class WebhookDispatcher {
  private readonly webhooks: WebhookRepository;
  private readonly running = new Map<string, Promise<void>>();
  private readonly unsubscribe: () => void;
  private readonly poll: NodeJS.Timeout;
  private dueTimer: NodeJS.Timeout | undefined;
  private passQueued = false;
  private stopped = false;

  constructor(
    private readonly store: KvStore,
    private readonly management: ManagementLog,
    private readonly options: DispatcherOptions,
    private readonly log: Logger,
  ) {
    this.webhooks = new WebhookRepository(store);
    this.unsubscribe = management.onApplied(() => this.wake());
    this.poll = setInterval(() => this.wake(), POLL_MS);
    this.poll.unref();
    this.wake();
  }

  private get leaseMs(): number {
    return this.options.timeoutMs * 2 + LEASE_MARGIN_MS;
  }

  /** Schedules one pass soon; many wake-ups in one turn make one pass. */
  wake(): void {
    if (this.passQueued || this.stopped) return;
    this.passQueued = true;
    setImmediate(() => {
      this.passQueued = false;
      this.pass();
    });
  }

  private pass(): void {
    if (this.stopped) return;
    try {
      this.passOnce();
    } catch (error) {
      // A pass runs on its own turn: what it throws would end the process. The next wake-up tries again.
      this.log.error("webhook dispatch pass failed", { error: String(error) });
    }
  }

  private passOnce(): void {
    this.store.refresh();
    const now = Date.now();
    let nextDue = Infinity;
    for (const webhook of this.webhooks.listAll()) {
      if (this.running.size >= this.options.maxInFlight) return;
      if (!webhook.enabled || this.running.has(webhook.id)) continue;
      const head = this.webhooks.head(webhook.id);
      if (!head) continue;
      const due = head.nextAttemptAt === null ? now : Date.parse(head.nextAttemptAt);
      const lease = webhook.lease;
      const leasedElsewhere = lease !== null && lease.nodeId !== this.options.nodeId ? Date.parse(lease.until) : 0;
      const ready = Math.max(due, leasedElsewhere);
      if (ready > now) {
        nextDue = Math.min(nextDue, ready);
        continue;
      }
      const run = this.attempt(webhook.appId, webhook.id).finally(() => {
        this.running.delete(webhook.id);
        this.wake();
      });
      this.running.set(webhook.id, run);
    }
    this.armDue(nextDue);
  }

  private armDue(at: number): void {
    clearTimeout(this.dueTimer);
    if (at === Infinity || this.stopped) return;
    this.dueTimer = setTimeout(() => this.wake(), Math.max(0, Math.min(at - Date.now(), 2 ** 31 - 1)));
    this.dueTimer.unref();
  }

  private async submit<T extends "webhook.claim" | "webhook.attempt">(webhook: WebhookRecord, type: T, body: ChangeBodies[T]): Promise<ChangeResults[T] | undefined> {
    // The webhook's author stands behind its bookkeeping, as a scheduled request's author behind its firing.
    const change = { ...newEnvelope(webhook.createdBy, null), type, ...body } as unknown as ChangeOf<T>;
    const outcome = await this.management.submit(change);
    return outcome.ok ? outcome.value : undefined;
  }

  /** Claims the webhook when this node holds no lease long enough, attempts its head once, records the result. */
  private async attempt(appId: string, webhookId: string): Promise<void> {
    try {
      let webhook = this.webhooks.get(appId, webhookId);
      if (!webhook?.enabled) return;
      const { nodeId } = this.options;
      const held = webhook.lease;
      const ours = held !== null && held.nodeId === nodeId && Date.parse(held.until) > Date.now() + this.options.timeoutMs + LEASE_MARGIN_MS;
      if (!ours) {
        const claim = await this.submit(webhook, "webhook.claim", { appId, webhookId, nodeId, until: new Date(Date.now() + this.leaseMs).toISOString() });
        if (!claim?.granted || this.stopped) return;
        this.store.refresh();
        webhook = this.webhooks.get(appId, webhookId);
      }
      const delivery = this.webhooks.head(webhookId);
      if (!webhook?.enabled || !delivery || (delivery.nextAttemptAt !== null && Date.parse(delivery.nextAttemptAt) > Date.now())) return;
      const at = new Date();
      const result = await this.options.send(webhook, delivery).catch((error: unknown): AttemptResult => ({ status: null, durationMs: Date.now() - at.getTime(), error: `not sent: ${String(error)}` }));
      const attempts = delivery.attemptsThisRound + 1;
      const outcome = outcomeOf(result.status, attempts);
      const nextAttemptAt = outcome === "retry" ? new Date(Date.now() + retryDelayMs(attempts, this.options.retryBaseMs)).toISOString() : null;
      await this.submit(webhook, "webhook.attempt", {
        appId,
        webhookId,
        deliveryId: delivery.id,
        nodeId,
        attempt: { at: at.toISOString(), status: result.status, durationMs: result.durationMs, error: result.error, nodeId },
        outcome,
        nextAttemptAt,
        leaseUntil: new Date(Date.now() + this.leaseMs).toISOString(),
      });
    } catch (error) {
      // The log unreachable, the store closing: the delivery stays queued and is attempted again.
      if (!this.stopped) this.log.error("webhook attempt not recorded; it will be attempted again", { webhookId, error: String(error) });
    }
  }

  /** Stops passing; waits for the attempts in flight (each bounded by the attempt timeout) to record their results. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    clearInterval(this.poll);
    clearTimeout(this.dueTimer);
    await Promise.allSettled([...this.running.values()]);
  }
}

/** The SSRF policy of SWITCHYARD_WEBHOOK_*; a bad SWITCHYARD_WEBHOOK_ALLOW stops the start with a message naming it. */
export function webhookPolicy(config: Config): SafePostPolicy {
  try {
    return postPolicy(config.webhooks.allow, config.webhooks.timeoutMs);
  } catch (error) {
    throw new ConfigError(`Invalid configuration: ${(error as Error).message}.`);
  }
}

/** The service's dispatcher, from its configuration: SWITCHYARD_WEBHOOK_* and the node's id in cluster mode. */
export function startWebhookDispatcher(config: Config, policy: SafePostPolicy, store: KvStore, management: ManagementLog, log: Logger): WebhookDispatcher {
  const { timeoutMs, retryBaseMs, maxInFlight, publicUrl } = config.webhooks;
  return new WebhookDispatcher(
    store,
    management,
    { nodeId: config.cluster?.nodeId ?? "local", maxInFlight, timeoutMs, retryBaseMs, send: (webhook, delivery) => sendDelivery(webhook, delivery, { policy, publicUrl }) },
    log,
  );
}
