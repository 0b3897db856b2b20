/** Medians and spreads of repeated runs. */

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export interface Spread {
  min: number;
  max: number;
  /** (max − min) / median, in percent; 0 for a single run. */
  percent: number;
}

export function spread(values: readonly number[]): Spread {
  if (values.length === 0) return { min: Number.NaN, max: Number.NaN, percent: Number.NaN };
  const min = Math.min(...values);
  const max = Math.max(...values);
  const middle = median(values);
  return { min, max, percent: middle > 0 ? ((max - min) / middle) * 100 : 0 };
}
