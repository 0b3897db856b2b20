import { jetstream, JetStreamApiError, type JetStreamClient, type JetStreamManager, type JsMsg } from "@nats-io/jetstream";
import { Packr } from "msgpackr";
import { ServiceError } from "../errors/catalogue.js";
import { ChangeApplier } from "../management/apply.js";
import type { ChangeOf, ChangeType, ManagementChange } from "../management/changes.js";
import type { AppliedListener, ManagementLog } from "../management/management-log.js";
import type { ChangeOutcome } from "../management/outcome.js";
import type { Logger } from "../observability/logger.js";
import type { KvStore } from "../storage/kv.js";
import { changeSubject } from "./change-subjects.js";
import type { ClusterConnection } from "./connection.js";
import type { StreamCopyCheck } from "./copy-check.js";
import type { StreamPositions } from "./positions.js";
import type { StreamNames } from "./streams.js";

const packr = new Packr({ useRecords: false, moreTypes: false });
/** JetStream's "wrong last sequence" (optimistic concurrency lost): retry once caught up. */
const WRONG_LAST_SEQUENCE = 10071;
const MAX_ATTEMPTS = 8;
/** How long an admin call waits for its change to come back through the log and be applied here. */
const APPLY_TIMEOUT_MS = 15_000;

interface Waiter {
  resolve(outcome: ChangeOutcome): void;
}

/** The outcome of a change this node skips (not its to apply): written nowhere, like a refusal. */
const NOT_SERVED_HERE: ChangeOutcome = { ok: false, error: { code: "NOT_FOUND", message: "Not served by this node." } };

const unavailable = (message?: string) => new ServiceError("CLUSTER_UNAVAILABLE", message, undefined, 1);

/**
 * The configuration log in cluster mode (API.md §11): every management change is published to the replicated
 * configuration stream and applied by every node, in stream order, through the one `ChangeApplier`, with the stream
 * sequence stored in the same store transaction. `submit` resolves once this node applied the change
 * (read-your-writes), with the outcome apply produced here — the same outcome every node produced.
 */
export class ClusterConfigLog implements ManagementLog {
  private readonly applier: ChangeApplier;
  private readonly listeners = new Set<AppliedListener>();
  private readonly waiters = new Map<string, Waiter>();
  private readonly appliedWaiters: { sequence: number; resolve: () => void }[] = [];
  private client: JetStreamClient | undefined;
  private stopped = false;
  private messages: { stop(): void } | undefined;
  /** Messages still in the stream after the last one applied, as JetStream reported with it. */
  pending = 0;

  constructor(
    private readonly parts: {
      store: KvStore;
      connection: ClusterConnection;
      /** JetStream's management API, once the node reached NATS. */
      jsm: () => JetStreamManager;
      names: StreamNames;
      positions: StreamPositions;
      log: Logger;
      publishTimeoutMs: number;
      onPublished?: (seconds: number) => void;
      /**
       * Which changes of this stream this node applies (inside the apply's transaction); the others only move its
       * position. Absent: all. A region's node reading the unregioned stream takes only unpinned apps' changes.
       */
      accepts?: (change: ManagementChange) => boolean;
      /** Checks each message of the copy this node reads against JetStream's promises; a repeated change id is not applied again. */
      copyCheck: StreamCopyCheck;
    },
  ) {
    this.applier = new ChangeApplier(parts.store);
  }

  /** Made on first use: the connection exists only once NATS answered. */
  private get js(): JetStreamClient {
    return (this.client ??= jetstream(this.parts.connection.nc, { timeout: this.parts.publishTimeoutMs }));
  }

  get applied(): number {
    return this.parts.positions.applied("config");
  }

  onApplied(listener: AppliedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async submit<T extends ChangeType>(change: ChangeOf<T>): Promise<ChangeOutcome<T>> {
    const { connection, names, positions } = this.parts;
    if (!connection.connected) throw unavailable();
    const { subject: scope, concurrency } = changeSubject(change as ManagementChange);
    const subject = names.configSubjectPrefix + scope;
    const applied = new Promise<ChangeOutcome>((resolve) => this.waiters.set(change.id, { resolve }));
    const data = packr.pack(change);
    try {
      for (let attempt = 1; ; attempt++) {
        const started = performance.now();
        try {
          const ack = await this.js.publish(subject, data, {
            msgID: change.id,
            ...(concurrency ? { expect: { lastSubjectSequence: positions.subject(subject) } } : {}),
          });
          this.parts.copyCheck.acknowledged(ack.seq, change.id);
          this.parts.onPublished?.((performance.now() - started) / 1000);
          break;
        } catch (error) {
          if (attempt === MAX_ATTEMPTS) throw error;
          if (error instanceof JetStreamApiError && error.code === WRONG_LAST_SEQUENCE) {
            // Someone changed this subject since what this node applied: catch up, then publish again — unless the
            // change itself got in (a retried publish whose first try was stored) and has been applied meanwhile.
            await this.catchUp();
            if (!this.waiters.has(change.id)) break;
          } else if (error instanceof JetStreamApiError || !connection.connected) {
            throw error;
          }
          // Otherwise no acknowledgement came (a timeout during a failover): the first try may have been stored, so
          // try again with the same message id; JetStream stores it once at most.
        }
      }
    } catch (error) {
      this.waiters.delete(change.id);
      if (error instanceof ServiceError) throw error;
      this.parts.log.error("configuration change not confirmed by JetStream", { type: change.type, error: String(error) });
      throw unavailable("The change could not be confirmed by the cluster; it may still be applied: check before retrying.");
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(unavailable("The change was replicated but not yet applied on this node; it will be.")), APPLY_TIMEOUT_MS);
    });
    try {
      return (await Promise.race([applied, timeout])) as ChangeOutcome<T>;
    } finally {
      clearTimeout(timer);
      this.waiters.delete(change.id);
    }
  }

  /** Resolves once this node applied everything the stream held when asked. */
  async catchUp(): Promise<void> {
    const info = await this.parts.jsm().streams.info(this.parts.names.config);
    await this.appliedUpTo(info.state.last_seq);
  }

  appliedUpTo(sequence: number): Promise<void> {
    if (this.applied >= sequence) return Promise.resolve();
    return new Promise((resolve) => this.appliedWaiters.push({ sequence, resolve }));
  }

  /** Applies the stream from after the last applied sequence, for ever (an ordered consumer: in order, no gaps). */
  async run(): Promise<void> {
    const { names, log } = this.parts;
    const js = jetstream(this.parts.connection.nc);
    while (!this.stopped) {
      try {
        const start = this.applied + 1;
        const consumer = await js.consumers.get(names.config, { deliver_policy: "by_start_sequence" as never, opt_start_seq: start });
        const messages = await consumer.consume({ max_messages: 256 });
        this.messages = messages;
        for await (const message of messages) {
          if (this.stopped) break;
          const applying = this.applyMessage(message);
          this.idle = applying.catch(() => undefined);
          await applying;
        }
      } catch (error) {
        if (this.stopped) return;
        log.error("configuration consumer interrupted; resuming", { error: String(error) });
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  /** Moves this node's positions past a message whose change is not applied (skipped or failed). */
  private async moveTo(sequence: number, subject: string): Promise<void> {
    const { store, positions } = this.parts;
    await store.write(() => {
      if (positions.applied("config") >= sequence) return;
      positions.setApplied("config", sequence);
      positions.setSubject(subject, sequence);
    });
  }

  private async applyMessage(message: JsMsg): Promise<void> {
    const { store, positions, log, accepts } = this.parts;
    const sequence = message.seq;
    const change = packr.unpack(message.data) as ManagementChange;
    let outcome: ChangeOutcome | undefined;
    const fresh = sequence > positions.applied("config");
    if (fresh && !this.parts.copyCheck.admit(sequence, message.headers?.get("Nats-Msg-Id") || undefined, message.time.getTime())) {
      // A change id applied before (a copy that differs from JetStream's promise): its position moves, nothing is applied twice.
      await this.moveTo(sequence, message.subject);
      this.pending = message.info.pending;
      return;
    }
    try {
      outcome = await store.write(() => {
        if (positions.applied("config") >= sequence) return undefined;
        const result = accepts === undefined || accepts(change) ? this.applier.apply(change) : NOT_SERVED_HERE;
        positions.setApplied("config", sequence);
        positions.setSubject(message.subject, sequence);
        return result;
      });
    } catch (error) {
      // A fault (not a refusal) in apply: every node meets it at the same change, so every node skips it alike.
      log.error("configuration change failed to apply; skipped", { sequence, type: change.type, error: String((error as Error)?.stack ?? error) });
      await this.moveTo(sequence, message.subject);
      outcome = { ok: false, error: { code: "INTERNAL", message: "The change could not be applied." } };
    }
    this.pending = message.info.pending;
    if (outcome?.ok) for (const listener of this.listeners) listener(change, outcome);
    const waiter = outcome === undefined ? undefined : this.waiters.get(change.id);
    if (waiter !== undefined) {
      this.waiters.delete(change.id);
      waiter.resolve(outcome!);
    }
    for (let index = this.appliedWaiters.length - 1; index >= 0; index--) {
      const waiter = this.appliedWaiters[index]!;
      if (waiter.sequence <= sequence) {
        this.appliedWaiters.splice(index, 1);
        waiter.resolve();
      }
    }
  }

  /**
   * Starts the consumer again after the last applied message: the watchdog's remedy for a consumer that stopped
   * delivering (seen after a NATS server failed over: the ordered consumer neither delivered nor failed).
   */
  restartConsumer(): void {
    this.messages?.stop();
  }

  /** Stops consuming; resolves once no apply is in flight (the store may close then). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.messages?.stop();
    await this.idle;
    // Whoever waits for a position (the tracking applier) is let go; it checks that it is stopping.
    for (const waiter of this.appliedWaiters.splice(0)) waiter.resolve();
  }

  /** Resolves when the message being applied (if any) is committed. */
  private idle: Promise<void> = Promise.resolve();
}
