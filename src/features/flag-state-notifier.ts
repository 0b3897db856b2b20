/**
 * Tells listeners (live-update streams, `waitForVersion` requests, evaluation caches) that an environment's
 * flagStateVersion moved. Changes made by this process are announced at once; changes made by another process
 * sharing the data dir are found by `poll`, which main.ts runs on a short timer.
 */
export type FlagStateListener = (environmentId: string, flagStateVersion: number) => void;

export class FlagStateNotifier {
  private readonly listeners = new Set<FlagStateListener>();
  private readonly known = new Map<string, number>();

  constructor(private readonly readVersions: () => Iterable<[string, number]>) {
    for (const [environmentId, version] of readVersions()) this.known.set(environmentId, version);
  }

  subscribe(listener: FlagStateListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The last version seen for an environment. */
  current(environmentId: string): number {
    return this.known.get(environmentId) ?? 0;
  }

  announce(environmentId: string, flagStateVersion: number): void {
    if ((this.known.get(environmentId) ?? -1) >= flagStateVersion) return;
    this.known.set(environmentId, flagStateVersion);
    for (const listener of this.listeners) listener(environmentId, flagStateVersion);
  }

  /** Re-reads every environment's version and announces the ones that grew. */
  poll(): void {
    for (const [environmentId, version] of this.readVersions()) this.announce(environmentId, version);
  }
}
