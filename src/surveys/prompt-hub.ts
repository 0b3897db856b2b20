/**
 * Every open prompt stream (`GET /sse`, the browser SDKs' automated feedback channel) of the process, by
 * environment and user. A check — on connect, and when the user's events are tracked — asks the Prompter whether
 * the user gets a prompt and writes it to each of their streams. Checks of one user never run side by side: one
 * asked for while another runs runs once more after it, so no tracked use is missed and no prompt sent twice.
 */
import type { StreamResponse, StreamSink } from "../http/types.js";
import { ServiceError } from "../errors/catalogue.js";
import { CONNECTED_COMMENT, KEEP_ALIVE_COMMENT } from "../features/sse-frames.js";
import type { Logger } from "../observability/logger.js";
import type { PromptRecord } from "./prompt-store.js";
import type { Prompter } from "./prompter.js";

export interface PromptHubLimits {
  keepAliveMs: number;
  /** Streams the whole process holds open for prompts. */
  maxStreams: number;
}

/** Streams one channel may hold open (tabs of one browser share a channel). */
export const MAX_STREAMS_PER_CHANNEL = 8;
const RETRY_AFTER_SECONDS = 30;

interface PromptStream {
  readonly environmentId: string;
  readonly userId: string;
  readonly channel: string;
  readonly sink: StreamSink;
  /** A live-update stream (`/sse/client`) that also carries prompts: its owner keeps it alive and counts it. */
  readonly shared: boolean;
  /** Prompt ids already written to this stream. */
  readonly sent: Set<string>;
  closed: boolean;
}

/**
 * The frame the SDKs read: an Ably-style message whose `data` is the prompt as a JSON string. The Bucket SDK parses
 * `message.data` as JSON; the Reflag SDK parses it when it is a string and hands `message.data` on.
 */
export function promptFrame(channel: string, prompt: PromptRecord): string {
  const data = JSON.stringify({
    question: prompt.question,
    showAfter: prompt.showAfter,
    showBefore: prompt.showBefore,
    promptId: prompt.promptId,
    featureId: prompt.featureId,
  });
  return `data: ${JSON.stringify(channel === "" ? { name: "prompt", data } : { name: "prompt", channel, data })}\n\n`;
}

export class PromptHub {
  /** `env␀user` → that user's open streams. */
  private readonly byUser = new Map<string, Set<PromptStream>>();
  private readonly perChannel = new Map<string, number>();
  private readonly environments = new Map<string, number>();
  private total = 0;
  private keepAliveTimer: NodeJS.Timeout | undefined;
  /** Per user: the check running now, and whether another was asked for meanwhile. */
  private readonly checks = new Map<string, { again: boolean; replay: boolean }>();

  constructor(
    private readonly prompter: Prompter,
    private readonly limits: PromptHubLimits,
    private readonly logger: Logger,
  ) {}

  /** Whether any user of the environment has a stream open (tracking skips all prompt work otherwise). */
  hasStreams(environmentId: string): boolean {
    return this.environments.has(environmentId);
  }

  hasUser(environmentId: string, userId: string): boolean {
    return this.byUser.has(userKey(environmentId, userId));
  }

  openCount(): number {
    return this.total;
  }

  /** A stream for the channel's user; admission as `LiveStreamHub.open` (checked now, counted when started). */
  open(owner: { environmentId: string; userId: string; channel: string }, headers: Record<string, string>): StreamResponse {
    if (this.total >= this.limits.maxStreams) {
      throw new ServiceError("RATE_LIMITED", "Too many prompt streams are open; retry later.", undefined, RETRY_AFTER_SECONDS);
    }
    if ((this.perChannel.get(owner.channel) ?? 0) >= MAX_STREAMS_PER_CHANNEL) {
      throw new ServiceError("RATE_LIMITED", `This channel already has ${MAX_STREAMS_PER_CHANNEL} streams open; retry later.`, undefined, RETRY_AFTER_SECONDS);
    }
    return { status: 200, headers, preamble: CONNECTED_COMMENT, start: (sink) => this.attach(owner, sink) };
  }

  /** Users of the environment whose events were just committed: those with a stream open get a check. */
  usersTracked(environmentId: string, userIds: Iterable<string>): void {
    for (const userId of userIds) if (this.hasUser(environmentId, userId)) this.check(environmentId, userId, false);
  }

  /**
   * Carries prompts on a live-update stream too: the Reflag browser SDK (1.6.1) takes its prompts from the
   * `/sse/client` stream it opens for flag updates (any message that is not a flag update goes to its prompt
   * handler), naming the user in its `context` parameter. The live-update hub owns that stream.
   */
  share(owner: { environmentId: string; userId: string }, sink: StreamSink): void {
    const stream: PromptStream = { ...owner, channel: "", sink, shared: true, sent: new Set(), closed: false };
    this.add(stream);
    sink.onClose(() => this.detach(stream));
    this.check(owner.environmentId, owner.userId, true);
  }

  closeAll(): void {
    for (const streams of [...this.byUser.values()]) for (const stream of [...streams]) this.end(stream);
  }

  private attach(owner: { environmentId: string; userId: string; channel: string }, sink: StreamSink): void {
    const stream: PromptStream = { ...owner, sink, shared: false, sent: new Set(), closed: false };
    this.add(stream);
    this.perChannel.set(owner.channel, (this.perChannel.get(owner.channel) ?? 0) + 1);
    this.total++;
    if (this.total === 1) {
      this.keepAliveTimer = setInterval(() => this.keepAlive(), this.limits.keepAliveMs);
      this.keepAliveTimer.unref();
    }
    sink.onClose(() => this.detach(stream));
    this.check(owner.environmentId, owner.userId, true);
  }

  private add(stream: PromptStream): void {
    const user = userKey(stream.environmentId, stream.userId);
    let streams = this.byUser.get(user);
    if (!streams) this.byUser.set(user, (streams = new Set()));
    streams.add(stream);
    this.environments.set(stream.environmentId, (this.environments.get(stream.environmentId) ?? 0) + 1);
  }

  private check(environmentId: string, userId: string, replay: boolean): void {
    const user = userKey(environmentId, userId);
    const running = this.checks.get(user);
    if (running) {
      running.again = true;
      running.replay ||= replay;
      return;
    }
    const state = { again: false, replay: false };
    this.checks.set(user, state);
    const run = async (withReplay: boolean): Promise<void> => {
      const prompt = await this.prompter.promptFor(environmentId, userId, Date.now(), withReplay);
      if (prompt) this.deliver(user, prompt);
      if (state.again) {
        const again = state.replay;
        state.again = false;
        state.replay = false;
        await run(again);
      }
    };
    run(replay)
      .catch((error: unknown) => this.logger.error("prompt check failed", { environmentId, error: String(error) }))
      .finally(() => this.checks.delete(user));
  }

  private deliver(user: string, prompt: PromptRecord): void {
    for (const stream of [...(this.byUser.get(user) ?? [])]) {
      if (stream.sent.has(prompt.promptId)) continue;
      stream.sent.add(prompt.promptId);
      this.send(stream, promptFrame(stream.channel, prompt));
    }
  }

  private detach(stream: PromptStream): void {
    if (stream.closed) return;
    stream.closed = true;
    const user = userKey(stream.environmentId, stream.userId);
    const streams = this.byUser.get(user);
    if (streams?.delete(stream) && streams.size === 0) this.byUser.delete(user);
    decrement(this.environments, stream.environmentId);
    if (stream.shared) return;
    decrement(this.perChannel, stream.channel);
    this.total--;
    if (this.total === 0) {
      clearInterval(this.keepAliveTimer);
      this.keepAliveTimer = undefined;
    }
  }

  private keepAlive(): void {
    for (const streams of [...this.byUser.values()]) for (const stream of [...streams]) if (!stream.shared) this.send(stream, KEEP_ALIVE_COMMENT);
  }

  private send(stream: PromptStream, chunk: string): void {
    if (stream.closed) return;
    if (!stream.sink.write(chunk)) this.end(stream);
  }

  private end(stream: PromptStream): void {
    if (stream.closed) return;
    stream.sink.end();
    this.detach(stream);
  }
}

function userKey(environmentId: string, userId: string): string {
  return `${environmentId}\u0000${userId}`;
}

function decrement(counts: Map<string, number>, name: string): void {
  const left = (counts.get(name) ?? 1) - 1;
  if (left > 0) counts.set(name, left);
  else counts.delete(name);
}
