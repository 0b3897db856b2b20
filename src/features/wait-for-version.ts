import type { KvStore } from "../storage/kv.js";
import type { TenancyRepository } from "../tenancy/tenancy-repository.js";
import type { FlagStateNotifier } from "./flag-state-notifier.js";

/** `waitForVersion` waits at most this long, then answers with what there is. */
export const WAIT_FOR_VERSION_MS = 5_000;

/** What waiting needs: the notifier, and the store to read the environment's version from. */
export interface VersionSources {
  flagStates: FlagStateNotifier;
  store: KvStore;
  tenancy: TenancyRepository;
}

/**
 * Resolves once the environment reaches `version`, or after the timeout. The version is read from the store first
 * (a change made by another process is seen at once, not at the next poll) and announced, so that everything reading
 * the notifier afterwards — the rules a job is evaluated against included — agrees with it.
 */
export function waitForFlagState(sources: VersionSources, environmentId: string, version: number, timeoutMs = WAIT_FOR_VERSION_MS): Promise<void> {
  sources.store.refresh();
  const current = sources.tenancy.getEnvironment(environmentId)?.flagStateVersion ?? 0;
  sources.flagStates.announce(environmentId, current);
  if (current >= version) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      unsubscribe();
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    const unsubscribe = sources.flagStates.subscribe((changed, reached) => {
      if (changed === environmentId && reached >= version) done();
    });
  });
}

/** `waitForVersion` from a raw query: a non-negative integer, else undefined (ignored). */
export function waitForVersionParam(query: string): number | undefined {
  if (!query.includes("waitForVersion=")) return undefined;
  const raw = new URLSearchParams(query).get("waitForVersion");
  if (raw === null || !/^\d{1,15}$/.test(raw)) return undefined;
  return Number(raw);
}
