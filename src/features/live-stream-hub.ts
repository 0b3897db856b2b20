import { ServiceError } from "../errors/catalogue.js";
import type { FlagStateNotifier } from "./flag-state-notifier.js";
import type { StreamResponse, StreamSink } from "../http/types.js";
import { CONNECTED_COMMENT, KEEP_ALIVE_COMMENT, flagsUpdatedFrame } from "./sse-frames.js";

export interface LiveStreamLimits {
  /** Interval of the keep-alive comment. */
  readonly keepAliveMs: number;
  /** Streams one key may hold open at once. */
  readonly maxStreamsPerKey: number;
  /** Streams the whole process holds open at once. */
  readonly maxStreams: number;
}

/** Seconds a client refused for too many streams is asked to wait (the SDKs retry on their own schedule anyway). */
export const STREAM_LIMIT_RETRY_AFTER_SECONDS = 30;

interface OpenStream {
  readonly environmentId: string;
  readonly keyId: string;
  readonly sink: StreamSink;
  closed: boolean;
  /** The newest version this stream was sent: an announcement of it again, or of an older one, tells the client nothing. */
  sentVersion: number;
  readonly frame: (flagStateVersion: number) => string;
}

/** What `open` needs to know about the caller. */
export interface StreamOwner {
  environmentId: string;
  /** Identifies the key the stream is counted against (an environment has one publishable and one secret key). */
  keyId: string;
  /** The environment's flagStateVersion now, replayed as the first event. */
  currentVersion: number;
  /** How a new version is announced on this stream; the Reflag SDKs' `flags-updated` frame unless said otherwise. */
  frame?: (flagStateVersion: number) => string;
}

/**
 * Every open live-update stream of the process. One notifier subscription and one keep-alive timer serve all
 * streams, and both exist only while a stream is open, so an idle service holds no timer.
 *
 * A stream whose client does not keep up (a write reports backpressure) is ended rather than buffered: the next
 * connection replays the current version, so nothing is lost by dropping it, and a vanished client cannot pin
 * memory.
 */
export class LiveStreamHub {
  private readonly byEnvironment = new Map<string, Set<OpenStream>>();
  private readonly perKey = new Map<string, number>();
  private total = 0;
  private keepAliveTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly notifier: FlagStateNotifier,
    private readonly limits: LiveStreamLimits,
  ) {}

  /** Streams open now (all keys). */
  openCount(): number {
    return this.total;
  }

  /**
   * A stream response for `owner`, or a retryable 429 when the key or the process is at its limit. The limit is
   * checked here and the stream counted when the front end starts it; front ends start a stream in the same turn
   * as a synchronous handler answers, so no other admission runs in between.
   */
  open(owner: StreamOwner, headers: Record<string, string>): StreamResponse {
    if (this.total >= this.limits.maxStreams) {
      throw new ServiceError("RATE_LIMITED", "Too many live-update streams are open; retry later.", undefined, STREAM_LIMIT_RETRY_AFTER_SECONDS);
    }
    if ((this.perKey.get(owner.keyId) ?? 0) >= this.limits.maxStreamsPerKey) {
      throw new ServiceError(
        "RATE_LIMITED",
        `This key already has ${this.limits.maxStreamsPerKey} live-update streams open; retry later.`,
        undefined,
        STREAM_LIMIT_RETRY_AFTER_SECONDS,
      );
    }
    return { status: 200, headers, preamble: CONNECTED_COMMENT, start: (sink) => this.attach(owner, sink) };
  }

  /** Ends every stream (their close listeners then drop them). */
  closeAll(): void {
    for (const streams of [...this.byEnvironment.values()]) for (const stream of [...streams]) this.end(stream);
  }

  private attach(owner: StreamOwner, sink: StreamSink): void {
    // The replay lets a client that connected after fetching catch up with a change made in between.
    const replayed = Math.max(owner.currentVersion, this.notifier.current(owner.environmentId));
    const frame = owner.frame ?? flagsUpdatedFrame;
    const stream: OpenStream = { environmentId: owner.environmentId, keyId: owner.keyId, sink, closed: false, sentVersion: replayed, frame };
    let streams = this.byEnvironment.get(owner.environmentId);
    if (!streams) this.byEnvironment.set(owner.environmentId, (streams = new Set()));
    streams.add(stream);
    this.perKey.set(owner.keyId, (this.perKey.get(owner.keyId) ?? 0) + 1);
    this.total++;
    if (this.total === 1) this.startSharedWork();
    sink.onClose(() => this.detach(stream));
    this.send(stream, frame(replayed));
  }

  private detach(stream: OpenStream): void {
    if (stream.closed) return;
    stream.closed = true;
    const streams = this.byEnvironment.get(stream.environmentId);
    if (streams?.delete(stream) && streams.size === 0) this.byEnvironment.delete(stream.environmentId);
    const left = (this.perKey.get(stream.keyId) ?? 1) - 1;
    if (left > 0) this.perKey.set(stream.keyId, left);
    else this.perKey.delete(stream.keyId);
    this.total--;
    if (this.total === 0) this.stopSharedWork();
  }

  private startSharedWork(): void {
    this.unsubscribe = this.notifier.subscribe((environmentId, flagStateVersion) => this.announce(environmentId, flagStateVersion));
    this.keepAliveTimer = setInterval(() => this.keepAlive(), this.limits.keepAliveMs);
    this.keepAliveTimer.unref();
  }

  private stopSharedWork(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    clearInterval(this.keepAliveTimer);
    this.keepAliveTimer = undefined;
  }

  private announce(environmentId: string, flagStateVersion: number): void {
    const streams = this.byEnvironment.get(environmentId);
    if (!streams) return;
    const frame = flagsUpdatedFrame(flagStateVersion);
    // A copy: a failed write ends the stream, which removes it from the set being walked. A stream that was already
    // sent this version (its replay, when the notifier first sees a new environment after the stream opened) skips it.
    for (const stream of [...streams]) {
      if (flagStateVersion <= stream.sentVersion) continue;
      stream.sentVersion = flagStateVersion;
      this.send(stream, stream.frame === flagsUpdatedFrame ? frame : stream.frame(flagStateVersion));
    }
  }

  private keepAlive(): void {
    for (const streams of [...this.byEnvironment.values()]) for (const stream of [...streams]) this.send(stream, KEEP_ALIVE_COMMENT);
  }

  private send(stream: OpenStream, chunk: string): void {
    if (stream.closed) return;
    if (!stream.sink.write(chunk)) this.end(stream);
  }

  private end(stream: OpenStream): void {
    if (stream.closed) return;
    stream.sink.end();
    // Front ends call the close listeners from end(); detach is idempotent in case one does not.
    this.detach(stream);
  }
}
