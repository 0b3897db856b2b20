/** An app's release stage (API.md §10): a name, a place in the order, and the targeting it means per environment. */
export interface StageRecord {
  id: string;
  name: string;
  order: number;
  /** Targeting rules by environment id; an environment not listed gets no rules (nobody). */
  targeting: Record<string, { rules: unknown[] }>;
  createdAt: string;
}

export const EVERYONE: unknown[] = Object.freeze([Object.freeze({ filter: Object.freeze({ type: "constant", value: true }) })]) as unknown as unknown[];

/**
 * The stages an app starts with. Until the first stage write they are computed from the app's environments (so an
 * environment added later is covered); the first write stores them. Early stages serve everyone outside the default
 * ("production") environment and nobody in it — starting points to edit, with whom is internal or in the beta —
 * and General availability serves everyone everywhere.
 */
export function defaultStages(appCreatedAt: string, environmentIds: readonly string[], productionId: string): StageRecord[] {
  const early = Object.fromEntries(environmentIds.map((id) => [id, { rules: id === productionId ? [] : EVERYONE }]));
  const everywhere = Object.fromEntries(environmentIds.map((id) => [id, { rules: EVERYONE }]));
  const stage = (id: string, name: string, order: number, targeting: StageRecord["targeting"]): StageRecord => ({ id, name, order, targeting, createdAt: appCreatedAt });
  return [
    stage("st_in_development", "In development", 1, early),
    stage("st_internal", "Internal", 2, early),
    stage("st_beta", "Beta", 3, early),
    stage("st_general_availability", "General availability", 4, everywhere),
  ];
}

declare module "../storage/kv.js" {
  /** The value types of the tables this room owns (see TableValues). */
  interface TableValues {
    /** Stages, and `true` for each (app, stage) pair in use. */
    stages: StageRecord | true;
  }
}
