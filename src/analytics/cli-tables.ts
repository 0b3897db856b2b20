/** Plain-text tables of the analytics answers, for `switchyard analytics …`. */

type Cell = string | number | null;

/** Left-aligned text, right-aligned numbers, two spaces between columns. */
export function renderTable(headers: readonly string[], rows: readonly Cell[][]): string {
  const text = rows.map((row) => row.map((cell) => (cell === null ? "-" : String(cell))));
  const numeric = headers.map((_, column) => rows.length > 0 && rows.every((row) => typeof row[column] === "number" || row[column] === null));
  const widths = headers.map((header, column) => Math.max(header.length, ...text.map((row) => row[column]?.length ?? 0)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (numeric[column] ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join("  ")
      .trimEnd();
  return [line(headers), line(widths.map((width) => "-".repeat(width))), ...text.map(line)].join("\n") + "\n";
}

interface SatisfactionView {
  count: number;
  average: number | null;
}

interface Standing {
  state: string;
  usageDays: number;
  lastUsedAt: string | null;
  satisfaction: SatisfactionView;
}

export interface FeaturesAnswer {
  from: string;
  to: string;
  features: { key: string; name: string; companies: Record<"none" | "tried" | "retained" | "churned" | "adopted", number>; satisfaction: SatisfactionView; exposure: { companies: number } }[];
}

export interface FeatureCompaniesAnswer {
  from: string;
  to: string;
  companies: ({ companyId: string } & Standing)[];
  next: string | null;
}

export interface CompanyAnswer {
  from: string;
  to: string;
  features: ({ key: string; name: string } & Standing)[];
}

const average = (satisfaction: SatisfactionView): Cell => (satisfaction.average === null ? null : Number(satisfaction.average.toFixed(2)));
const windowLine = (answer: { from: string; to: string }) => `window ${answer.from} .. ${answer.to}\n\n`;

export function featuresTable(answer: FeaturesAnswer): string {
  return (
    windowLine(answer) +
    renderTable(
      ["feature", "name", "none", "tried", "retained", "churned", "adopted", "feedback", "avg score", "exposed"],
      answer.features.map((feature) => [
        feature.key,
        feature.name,
        feature.companies.none,
        feature.companies.tried,
        feature.companies.retained,
        feature.companies.churned,
        feature.companies.adopted,
        feature.satisfaction.count,
        average(feature.satisfaction),
        feature.exposure.companies,
      ]),
    )
  );
}

export function featureCompaniesTable(answer: FeatureCompaniesAnswer): string {
  const table = renderTable(
    ["company", "state", "usage days", "last used", "feedback", "avg score"],
    answer.companies.map((row) => [row.companyId, row.state, row.usageDays, row.lastUsedAt, row.satisfaction.count, average(row.satisfaction)]),
  );
  return windowLine(answer) + table + (answer.next === null ? "" : `\nnext: ${answer.next}\n`);
}

export function companyTable(answer: CompanyAnswer): string {
  return (
    windowLine(answer) +
    renderTable(
      ["feature", "name", "state", "usage days", "last used", "feedback", "avg score"],
      answer.features.map((row) => [row.key, row.name, row.state, row.usageDays, row.lastUsedAt, row.satisfaction.count, average(row.satisfaction)]),
    )
  );
}
