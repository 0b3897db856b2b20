import { AckPolicy, DeliverPolicy, jetstream, type JetStreamClient, type JetStreamManager, type JsMsg } from "@nats-io/jetstream";
import { Packr } from "msgpackr";
import { randomBase62 } from "../tenancy/identifiers.js";
import { ServiceError } from "../errors/catalogue.js";
import type { Logger } from "../observability/logger.js";
import type { KvStore } from "../storage/kv.js";
import { projectRequests, type LoggedRequest } from "../tracking/project-requests.js";
import type { TrackingProjections } from "../tracking/projections.js";
import type { ClusterConnection } from "./connection.js";
import type { StreamCopyCheck } from "./copy-check.js";
import type { StreamPositions } from "./positions.js";
import type { StreamNames } from "./streams.js";

const packr = new Packr({ useRecords: false, moreTypes: false });
/** A batch is closed once its encoded requests pass this size (NATS's default max_payload is 1 MiB). */
const BATCH_BYTES = 512 * 1024;
/** Messages applied per store transaction while catching up. */
const FETCH_BATCH = 256;

interface Pending {
  request: LoggedRequest;
  bytes: Uint8Array;
  resolve(): void;
  reject(error: unknown): void;
}

const unavailable = () => new ServiceError("CLUSTER_UNAVAILABLE", undefined, undefined, 1);

/**
 * The tracking log's writing side: requests that arrive in one event-loop turn travel as one message, with a
 * message id so that a retried publish is stored once (JetStream's duplicate window). Each request's promise
 * resolves once JetStream acknowledged the message (stored on a quorum of servers), which is when the node answers
 * 200; never before, and never when the node cannot reach JetStream (a retryable 503 instead).
 */
export class TrackingPublisher {
  private queue: Pending[] = [];
  private scheduled = false;
  private client: JetStreamClient | undefined;
  /** Identifies this process's messages: node id, a random boot id, a counter. */
  private readonly idPrefix: string;
  private counter = 0;
  /** The stream sequence of the last message this node published: what its own applier must reach to see its writes. */
  lastPublished = 0;

  constructor(
    private readonly parts: {
      connection: ClusterConnection;
      names: StreamNames;
      nodeId: string;
      publishTimeoutMs: number;
      log: Logger;
      onBatch?: (requests: number, seconds: number) => void;
      /** JetStream stored message `msgID` at `sequence` (for the node's check of the copy its consumer reads). */
      onAcknowledged?: (sequence: number, msgID: string) => void;
    },
  ) {
    this.idPrefix = `${parts.nodeId}.${randomBase62(8)}.`;
  }

  /** Made on first use: the connection exists only once NATS answered. */
  private get js(): JetStreamClient {
    return (this.client ??= jetstream(this.parts.connection.nc, { timeout: this.parts.publishTimeoutMs }));
  }

  submit(request: LoggedRequest): Promise<void> {
    if (!this.parts.connection.connected) return Promise.reject(unavailable());
    const bytes = packr.pack(request);
    const maxPayload = this.parts.connection.nc.info?.max_payload ?? 1024 * 1024;
    if (bytes.length + 64 > maxPayload) {
      return Promise.reject(new ServiceError("PAYLOAD_TOO_LARGE", `The request is larger than the cluster's NATS max_payload (${maxPayload} bytes); raise max_payload on the NATS servers.`));
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ request, bytes, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const waiting = this.queue;
    this.queue = [];
    let batch: Pending[] = [];
    let size = 0;
    const maxPayload = this.parts.connection.nc.info?.max_payload ?? 1024 * 1024;
    for (const entry of waiting) {
      if (batch.length > 0 && (size + entry.bytes.length > BATCH_BYTES || size + entry.bytes.length + 64 > maxPayload)) {
        void this.publish(batch);
        batch = [];
        size = 0;
      }
      batch.push(entry);
      size += entry.bytes.length;
    }
    if (batch.length > 0) void this.publish(batch);
  }

  private async publish(batch: Pending[]): Promise<void> {
    // The requests are already encoded: the message is a msgpack array of them, written by hand around their bytes.
    const body = encodeArray(batch.map((entry) => entry.bytes));
    const msgID = this.idPrefix + String(++this.counter);
    const started = performance.now();
    for (let attempt = 1; ; attempt++) {
      try {
        const ack = await this.js.publish(this.parts.names.trackingSubject, body, { msgID });
        if (ack.seq > this.lastPublished) this.lastPublished = ack.seq;
        this.parts.onAcknowledged?.(ack.seq, msgID);
        this.parts.onBatch?.(batch.length, (performance.now() - started) / 1000);
        for (const entry of batch) entry.resolve();
        return;
      } catch (error) {
        // One more try with the same id (stored at most once) if the connection is up; otherwise a retryable 503.
        if (attempt < 2 && this.parts.connection.connected) continue;
        this.parts.log.error("tracking batch not acknowledged by JetStream; answered 503", { requests: batch.length, error: String(error) });
        for (const entry of batch) entry.reject(unavailable());
        return;
      }
    }
  }
}

/** A msgpack array header followed by already-encoded elements. */
function encodeArray(elements: Uint8Array[]): Uint8Array {
  const length = elements.reduce((sum, element) => sum + element.length, 0);
  const header = elements.length < 16 ? Uint8Array.of(0x90 | elements.length) : elements.length < 65536 ? Uint8Array.of(0xdc, elements.length >> 8, elements.length & 0xff) : Uint8Array.of(0xdd, (elements.length >>> 24) & 0xff, (elements.length >> 16) & 0xff, (elements.length >> 8) & 0xff, elements.length & 0xff);
  const out = new Uint8Array(header.length + length);
  out.set(header, 0);
  let offset = header.length;
  for (const element of elements) {
    out.set(element, offset);
    offset += element.length;
  }
  return out;
}

/**
 * The tracking log's reading side: a durable consumer per node applies every message to the local store, many
 * messages per transaction, with the last applied sequence stored in that same transaction, so a message applied
 * before a crash is skipped when JetStream delivers it again.
 */
export class TrackingApplier {
  private stopped = false;
  /** Messages after the last one applied, as JetStream reported with it. */
  pending = 0;
  /** Arrival time (epoch ms) of the newest request applied: with `pending`, how far behind this node's projection is. */
  lastAppliedReceivedAt = 0;
  private current: { stop(): void } | undefined;
  private restart = false;
  /** Resolves when the batch being applied (if any) is committed. */
  private idle: Promise<void> = Promise.resolve();

  constructor(
    private readonly parts: {
      store: KvStore;
      connection: ClusterConnection;
      /** JetStream's management API, once the node reached NATS. */
      jsm: () => JetStreamManager;
      names: StreamNames;
      nodeId: string;
      positions: StreamPositions;
      log: Logger;
      onApplied(environments: Set<string>): void;
      /** What the applier derives from tracking beside its entries (analytics, surveys). */
      projections: TrackingProjections;
      /** Resolves once this node's configuration log reached `sequence`. */
      configAppliedUpTo(sequence: number): Promise<void>;
      /**
       * Which environments' requests this node stores (inside the apply's transaction); the others only move its
       * position. Absent: all. A region's node reading the unregioned stream takes only unpinned apps' tracking.
       */
      accepts?: (environmentId: string) => boolean;
      /** Checks each message of the copy this node reads against JetStream's promises; a repeated message id is not applied again. */
      copyCheck: StreamCopyCheck;
    },
  ) {}

  get applied(): number {
    return this.parts.positions.applied("tracking");
  }

  private readonly waiters: { sequence: number; resolve(): void }[] = [];

  /** Resolves once this node applied the stream up to `sequence` (or after `timeoutMs`, whichever comes first). */
  appliedUpTo(sequence: number, timeoutMs: number): Promise<void> {
    if (this.applied >= sequence) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = { sequence, resolve };
      this.waiters.push(waiter);
      setTimeout(() => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        resolve();
      }, timeoutMs).unref();
    });
  }

  /**
   * The node's durable consumer, (re)created to start right after what the store holds. Recreating it rather than
   * resuming it matters after a crash: messages the dead process had fetched but not acknowledged would otherwise
   * wait out the acknowledgement timeout, and a consumer whose acknowledgements ran ahead of the store (a lost disk,
   * an older backup) would skip what the store lacks. The store's position is the truth; the durable consumer is
   * what shows the node's lag to the cluster while it runs.
   */
  private async ensureConsumer(): Promise<string> {
    const { names, nodeId } = this.parts;
    const jsm = this.parts.jsm();
    const durable = names.trackingConsumer(nodeId);
    const applied = this.applied;
    await jsm.consumers.delete(names.tracking, durable).catch(() => undefined);
    await jsm.consumers.add(names.tracking, {
      durable_name: durable,
      ack_policy: AckPolicy.All,
      ...(applied === 0 ? { deliver_policy: DeliverPolicy.All } : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: applied + 1 }),
      ack_wait: 30_000_000_000,
      max_ack_pending: 100_000,
    });
    return durable;
  }

  async run(): Promise<void> {
    const { log } = this.parts;
    const js = jetstream(this.parts.connection.nc);
    while (!this.stopped) {
      try {
        const durable = await this.ensureConsumer();
        const consumer = await js.consumers.get(this.parts.names.tracking, durable);
        while (!this.stopped) {
          const messages = await consumer.fetch({ max_messages: FETCH_BATCH, expires: 1_000 });
          this.current = messages;
          const batch: JsMsg[] = [];
          for await (const message of messages) batch.push(message);
          const { next, complete } = this.contiguous(batch);
          if (next.length > 0 && !this.stopped) {
            const applying = this.apply(next);
            this.idle = applying.catch(() => undefined);
            await applying;
          }
          // A gap: messages handed to a pull request that never reached us (a server failing over mid-fetch) are
          // not redelivered before the acknowledgement timeout, and acknowledging a later one would acknowledge them
          // too. Start the consumer again right after what is applied.
          if (!complete) {
            log.info("tracking consumer skipped ahead; restarting it from the last applied message", { applied: this.applied, received: batch[0]?.seq });
            break;
          }
          if (this.restart) {
            this.restart = false;
            break;
          }
        }
      } catch (error) {
        if (this.stopped) return;
        log.error("tracking consumer interrupted; resuming", { error: String(error) });
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  /**
   * The messages that continue the applied sequence without a gap (stream sequences of this stream are
   * consecutive: nothing is ever deleted from it), and whether that was all of the batch.
   */
  private contiguous(batch: JsMsg[]): { next: JsMsg[]; complete: boolean } {
    let expected = this.applied + 1;
    const next: JsMsg[] = [];
    for (const message of batch) {
      if (message.seq < expected) continue; // applied already (a redelivery)
      if (message.seq !== expected) return { next, complete: false };
      next.push(message);
      expected++;
    }
    return { next, complete: true };
  }

  private async apply(batch: JsMsg[]): Promise<void> {
    const { store, positions, log, accepts } = this.parts;
    const decoded = batch.map((message) => ({
      sequence: message.seq,
      // A message id applied before (a copy that differs from JetStream's promise): its position moves, nothing is counted twice.
      requests: this.parts.copyCheck.admit(message.seq, message.headers?.get("Nats-Msg-Id") || undefined, message.time.getTime()) ? (packr.unpack(message.data) as LoggedRequest[]) : [],
    }));
    const served = (requests: LoggedRequest[]) => (accepts === undefined ? requests : requests.filter((request) => accepts(request.environmentId)));
    // What these requests were validated against must be here first (see LoggedRequest.configSequence).
    let configSequence = 0;
    for (const entry of decoded) for (const request of entry.requests) configSequence = Math.max(configSequence, request.configSequence ?? 0);
    await this.parts.configAppliedUpTo(configSequence);
    // Stopping released that wait early: apply nothing then (the batch is delivered again at the next start).
    if (this.stopped) return;
    const onDropped = (error: ServiceError) => log.info("replicated feedback dropped: its feature is gone", { code: error.code });
    let changed: Set<string>;
    try {
      changed = await store.write(() => {
        const fresh = decoded.filter((entry) => entry.sequence > positions.applied("tracking"));
        if (fresh.length === 0) return new Set<string>();
        const environments = projectRequests(store, served(fresh.flatMap((entry) => entry.requests)), onDropped, this.parts.projections);
        positions.setApplied("tracking", fresh[fresh.length - 1]!.sequence);
        return environments;
      });
    } catch (error) {
      // A fault: apply message by message, so one bad message cannot hold up the rest (every node skips it alike).
      changed = new Set();
      for (const entry of decoded) {
        try {
          const environments = await store.write(() => {
            if (entry.sequence <= positions.applied("tracking")) return new Set<string>();
            const result = projectRequests(store, served(entry.requests), onDropped, this.parts.projections);
            positions.setApplied("tracking", entry.sequence);
            return result;
          });
          for (const environment of environments) changed.add(environment);
        } catch (inner) {
          log.error("tracking message failed to apply; skipped", { sequence: entry.sequence, error: String((inner as Error)?.stack ?? inner), batchError: String(error) });
          await store.write(() => {
            if (entry.sequence > positions.applied("tracking")) positions.setApplied("tracking", entry.sequence);
          });
        }
      }
    }
    const last = batch[batch.length - 1]!;
    for (const entry of decoded) for (const request of entry.requests) if (request.receivedAt > this.lastAppliedReceivedAt) this.lastAppliedReceivedAt = request.receivedAt;
    for (let index = this.waiters.length - 1; index >= 0; index--) {
      if (this.waiters[index]!.sequence <= last.seq) this.waiters.splice(index, 1)[0]!.resolve();
    }
    // AckPolicy.All: acknowledging the last acknowledges the batch, once it is committed here.
    last.ack();
    this.pending = last.info.pending;
    this.parts.onApplied(changed);
  }

  /** Starts the consumer again after the last applied message (the watchdog's remedy for a stalled consumer). */
  restartConsumer(): void {
    this.restart = true;
    this.current?.stop();
  }

  /** Stops consuming; resolves once no batch is being applied (the store may close then). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.stop();
    await this.idle;
  }
}
