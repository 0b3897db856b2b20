import type { FlagStateNotifier } from "./flag-state-notifier.js";

/** `waitForVersion` waits at most this long, then answers with what there is. */
export const WAIT_FOR_VERSION_MS = 5_000;

/** Resolves once the environment reaches `version`, or after the timeout. */
export function waitForFlagState(
  notifier: FlagStateNotifier,
  environmentId: string,
  version: number,
  readCurrent: () => number,
  timeoutMs = WAIT_FOR_VERSION_MS,
): Promise<void> {
  if (readCurrent() >= version) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      unsubscribe();
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    const unsubscribe = notifier.subscribe((changed, reached) => {
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
