import type { ComponentChildren } from "preact";
import { when } from "../ui";
import { DataTable } from "./DataTable";

/** A company's use of one feature, or a feature's use by one company: the analytics API gives both the same shape. */
export interface AdoptionRow {
  state: string;
  usageDays: number;
  lastUsedAt: string | null;
  satisfaction: { average: number | null };
}

/**
 * Adoption state per company of a feature, or per feature of a company (docs/ANALYTICS.md): one table, so both
 * views show state, days and satisfaction alike. `name` draws the first cell (a link to the other side).
 */
export function AdoptionTable<T extends AdoptionRow>({ nameColumn, rows, name }: { nameColumn: string; rows: readonly T[] | undefined; name(row: T): ComponentChildren }) {
  return (
    <DataTable
      columns={[nameColumn, "State", "Days used", "Last used", "Satisfaction"]}
      rows={rows}
      row={(row) => (
        <>
          <td>{name(row)}</td>
          <td>{row.state}</td>
          <td>{row.usageDays}</td>
          <td>{when(row.lastUsedAt)}</td>
          <td>{row.satisfaction.average === null ? "—" : row.satisfaction.average.toFixed(1)}</td>
        </>
      )}
    />
  );
}
