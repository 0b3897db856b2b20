/** Number and table formatting shared by the report's Markdown sections. */

export const isNumber = (value: number | undefined): value is number => value !== undefined && Number.isFinite(value);

export function count(value: number | undefined, digits = 0): string {
  return isNumber(value) ? value.toLocaleString("en", { maximumFractionDigits: digits, minimumFractionDigits: digits }) : "—";
}

export function ms(value: number | undefined): string {
  return isNumber(value) ? `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms` : "—";
}

export function mib(bytes: number | undefined): string {
  return isNumber(bytes) ? `${(bytes / 1024 ** 2).toFixed(1)} MiB` : "—";
}

export function nanoseconds(value: number): string {
  if (!isNumber(value)) return "—";
  if (value >= 1e6) return `${(value / 1e6).toFixed(2)} ms`;
  if (value >= 1e3) return `${(value / 1e3).toFixed(2)} µs`;
  return `${value.toFixed(0)} ns`;
}

export function withUnit(value: number, unit: string): string {
  return isNumber(value) ? `${count(value)} ${unit}` : "—";
}

/** Long failure messages (a child's stderr) are for the JSON; the table keeps the first line, cut short. */
export function shorten(text: string, limit = 160): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > limit ? `${line.slice(0, limit - 1)}…` : line;
}

export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const escape = (cell: string) => cell.replaceAll("|", "\\|").replaceAll("\n", " ");
  return [
    `| ${header.map(escape).join(" | ")} |`,
    `|${header.map(() => "---").join("|")}|`,
    ...rows.map((row) => `| ${row.map(escape).join(" | ")} |`),
  ].join("\n");
}
