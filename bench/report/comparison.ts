export type Verdict = "PASS" | "MISS" | "—";

/** A figure set against its baseline, with the target where an issue sets one. */
export interface Comparison {
  id: string;
  label: string;
  value: number;
  unit: string;
  baselineId: string | undefined;
  baselineLabel: string;
  baselineValue: number;
  /** value / baselineValue. */
  ratio: number;
  ratioStyle: "percent" | "times";
  /** Human wording, e.g. "≥ 60 % of hello-world". */
  target: string | undefined;
  verdict: Verdict;
}

export function verdict(ok: boolean | undefined): Verdict {
  return ok === undefined ? "—" : ok ? "PASS" : "MISS";
}
