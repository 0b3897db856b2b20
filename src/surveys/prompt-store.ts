/**
 * What live prompting keeps in the `surveys` table besides the rules (survey-rules.ts):
 *
 * - channel       `ch␀<channel>`                       → ChannelRecord (which environment and user a channel is)
 * - user channel  `env␀channel␀<userId>`               → channel name (one per user and environment, kept)
 * - token request `env␀token-request␀<channel>`        → Credential (the latest one; single use)
 * - token         `env␀token␀<channel>`                → Credential (the latest one; a newer one replaces it)
 * - prompt        `env␀prompt␀<userId>␀<featureKey>`   → PromptRecord (at most one per user and survey, ever)
 * - last prompt   `env␀quiet␀<userId>`                 → epoch ms of the user's latest prompt (quiet period)
 * - done          `env␀done␀<promptId>`                → 1 once the prompt was answered or dismissed
 *
 * Secrets (token-request nonces, tokens) are stored as SHA-256 digests only, like keys. Everything is bounded by the
 * number of users that opened a channel: requests and tokens are one per channel.
 */
import { key, prefixRange, type KvStore, type KvTable } from "../storage/kv.js";
import { digestKey } from "../tenancy/identifiers.js";

export interface ChannelRecord {
  environmentId: string;
  userId: string;
}

/** A single credential tied to a channel: its digest and when it stops working. */
export interface Credential {
  digest: string;
  expires: number;
}

export interface PromptRecord {
  promptId: string;
  featureKey: string;
  featureId: string;
  question: string;
  showAfter: number;
  showBefore: number;
  createdAt: number;
}

export class PromptStore {
  constructor(private readonly store: KvStore) {}

  private get table(): KvTable<unknown> {
    return this.store.table("surveys");
  }

  channel(channel: string): ChannelRecord | undefined {
    return this.table.get(key("ch", channel)) as ChannelRecord | undefined;
  }

  channelOfUser(environmentId: string, userId: string): string | undefined {
    return this.table.get(key(environmentId, "channel", userId)) as string | undefined;
  }

  /** Inside a write: the user's channel, made with `fresh` unless one exists. */
  ensureChannel(environmentId: string, userId: string, fresh: string): string {
    const existing = this.channelOfUser(environmentId, userId);
    if (existing !== undefined) return existing;
    this.table.put(key(environmentId, "channel", userId), fresh);
    this.table.put(key("ch", fresh), { environmentId, userId } satisfies ChannelRecord);
    return fresh;
  }

  credential(kind: "token-request" | "token", environmentId: string, channel: string): Credential | undefined {
    return this.table.get(key(environmentId, kind, channel)) as Credential | undefined;
  }

  /** Inside a write. */
  putCredential(kind: "token-request" | "token", environmentId: string, channel: string, secret: string, expires: number): void {
    this.table.put(key(environmentId, kind, channel), { digest: digestKey(secret), expires } satisfies Credential);
  }

  /** Inside a write. */
  removeCredential(kind: "token-request" | "token", environmentId: string, channel: string): void {
    this.table.remove(key(environmentId, kind, channel));
  }

  prompt(environmentId: string, userId: string, featureKey: string): PromptRecord | undefined {
    return this.table.get(key(environmentId, "prompt", userId, featureKey)) as PromptRecord | undefined;
  }

  /** Every prompt the user was ever sent in the environment. */
  promptsOf(environmentId: string, userId: string): PromptRecord[] {
    return [...this.table.range(prefixRange(environmentId, "prompt", userId))].map((entry) => entry.value as PromptRecord);
  }

  lastPromptedAt(environmentId: string, userId: string): number | undefined {
    return this.table.get(key(environmentId, "quiet", userId)) as number | undefined;
  }

  /** Inside a write: records the prompt and starts the user's quiet period. */
  putPrompt(environmentId: string, userId: string, prompt: PromptRecord): void {
    this.table.put(key(environmentId, "prompt", userId, prompt.featureKey), prompt);
    this.table.put(key(environmentId, "quiet", userId), prompt.createdAt);
  }

  isDone(environmentId: string, promptId: string): boolean {
    return this.table.get(key(environmentId, "done", promptId)) !== undefined;
  }
}

/**
 * Inside a tracking write: a prompt the user dismissed or answered is never replayed to their channel. Prompt ids
 * are client input here; one holding the key separator could alias another key, so it is not recorded.
 */
export function markPromptDone(store: KvStore, environmentId: string, promptId: string): void {
  if (promptId.includes("\u0000")) return;
  store.table("surveys").put(key(environmentId, "done", promptId), 1);
}
