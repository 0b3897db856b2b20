import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { StreamSink } from "../http/types.js";
import { ServiceError } from "../errors/catalogue.js";
import { FlagStateNotifier } from "./flag-state-notifier.js";
import { LiveStreamHub, STREAM_LIMIT_RETRY_AFTER_SECONDS, type StreamOwner } from "./live-stream-hub.js";
import { CONNECTED_COMMENT, KEEP_ALIVE_COMMENT, flagsUpdatedFrame } from "./sse-frames.js";

/** A sink like the front ends': `end` and a client going away both run the close listeners once. */
class FakeSink implements StreamSink {
  writes: string[] = [];
  accepting = true;
  ended = false;
  private readonly listeners: (() => void)[] = [];
  private closed = false;
  write(chunk: string): boolean {
    if (this.closed) return false;
    this.writes.push(chunk);
    return this.accepting;
  }
  end(): void {
    this.ended = true;
    this.close();
  }
  onClose(listener: () => void): void {
    this.listeners.push(listener);
  }
  /** The client goes away. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const listener of this.listeners) listener();
  }
}

const LIMITS = { keepAliveMs: 1_000, maxStreamsPerKey: 2, maxStreams: 3 };

describe("LiveStreamHub", () => {
  let versions: Map<string, number>;
  let notifier: FlagStateNotifier;
  let hub: LiveStreamHub;

  beforeEach(() => {
    vi.useFakeTimers();
    versions = new Map([
      ["env_a", 5],
      ["env_b", 1],
    ]);
    notifier = new FlagStateNotifier(() => versions.entries());
    hub = new LiveStreamHub(notifier, LIMITS);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function start(owner: Partial<StreamOwner> = {}): FakeSink {
    const sink = new FakeSink();
    const response = hub.open({ environmentId: "env_a", keyId: "secret:env_a", currentVersion: 5, ...owner }, { "content-type": "text/event-stream" });
    expect(response.status).toBe(200);
    response.start(sink);
    return sink;
  }

  it("starts each stream with a comment and the current version, and passes the headers through", () => {
    const response = hub.open({ environmentId: "env_a", keyId: "k", currentVersion: 7 }, { "content-type": "text/event-stream", "x-test": "1" });
    expect(response.headers).toEqual({ "content-type": "text/event-stream", "x-test": "1" });
    const sink = new FakeSink();
    response.start(sink);
    // The newer of the record's version and the notifier's.
    expect(sink.writes).toEqual([flagsUpdatedFrame(7)]);
    expect(start().writes).toEqual([flagsUpdatedFrame(5)]);
  });

  it("does not send a stream a version it was already sent, as a new environment's first announcement would", () => {
    const sink = start({ environmentId: "env_new", keyId: "secret:env_new", currentVersion: 0 });
    expect(sink.writes).toEqual([flagsUpdatedFrame(0)]);
    // The notifier sees the environment for the first time, at the version the stream replayed.
    notifier.announce("env_new", 0);
    expect(sink.writes).toEqual([flagsUpdatedFrame(0)]);
    notifier.announce("env_new", 1);
    expect(sink.writes).toEqual([flagsUpdatedFrame(0), flagsUpdatedFrame(1)]);
  });

  it("sends each version change to the streams of that environment only", () => {
    const a = start();
    const b = start({ environmentId: "env_b", keyId: "secret:env_b", currentVersion: 1 });
    notifier.announce("env_a", 6);
    notifier.announce("env_a", 6); // not a change
    versions.set("env_b", 2);
    notifier.poll();
    expect(a.writes.slice(1)).toEqual([flagsUpdatedFrame(6)]);
    expect(b.writes.slice(1)).toEqual([flagsUpdatedFrame(2)]);
    expect(flagsUpdatedFrame(6)).toBe('data: {"name":"flags-updated","data":{"flagStateVersion":6}}\n\n');
  });

  it("keeps every stream alive from one shared timer, which exists only while streams are open", () => {
    expect(vi.getTimerCount()).toBe(0);
    const sinks = [start(), start({ keyId: "publishable:env_a" }), start({ environmentId: "env_b", keyId: "secret:env_b" })];
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(LIMITS.keepAliveMs * 2);
    for (const sink of sinks) expect(sink.writes.slice(1)).toEqual([KEEP_ALIVE_COMMENT, KEEP_ALIVE_COMMENT]);
    for (const sink of sinks) sink.close();
    expect(hub.openCount()).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("ends a stream whose client does not keep up, and forgets it", () => {
    const slow = start();
    const fast = start();
    slow.accepting = false;
    notifier.announce("env_a", 6);
    expect(slow.ended).toBe(true);
    expect(hub.openCount()).toBe(1);
    notifier.announce("env_a", 7);
    expect(slow.writes).toHaveLength(2);
    expect(fast.writes.slice(1)).toEqual([flagsUpdatedFrame(6), flagsUpdatedFrame(7)]);
    // Ending on the very first write (a client gone before its stream started) also frees the slot.
    const hub2 = new LiveStreamHub(notifier, LIMITS);
    const gone = new FakeSink();
    gone.accepting = false;
    hub2.open({ environmentId: "env_a", keyId: "k", currentVersion: 0 }, {}).start(gone);
    expect(gone.ended).toBe(true);
    expect(hub2.openCount()).toBe(0);
  });

  it("refuses streams past the per-key and the process-wide limit with a retryable 429", () => {
    start();
    start();
    const refuse = (keyId: string) => {
      try {
        hub.open({ environmentId: "env_a", keyId, currentVersion: 0 }, {});
      } catch (error) {
        return error as ServiceError;
      }
      throw new Error("not refused");
    };
    const perKey = refuse("secret:env_a");
    expect(perKey).toBeInstanceOf(ServiceError);
    expect(perKey.code).toBe("RATE_LIMITED");
    expect(perKey.status).toBe(429);
    expect(perKey.retryAfterSeconds).toBe(STREAM_LIMIT_RETRY_AFTER_SECONDS);
    const third = start({ keyId: "publishable:env_a" });
    expect(refuse("publishable:env_b").message).toMatch(/Too many live-update streams/);
    third.close();
    expect(() => start({ keyId: "publishable:env_b" })).not.toThrow();
  });

  it("closeAll ends every stream and drops the subscription", () => {
    const sinks = [start(), start({ environmentId: "env_b", keyId: "secret:env_b" })];
    hub.closeAll();
    expect(sinks.every((sink) => sink.ended)).toBe(true);
    expect(hub.openCount()).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    notifier.announce("env_a", 9);
    expect(sinks[0]!.writes).toHaveLength(1);
  });
});
