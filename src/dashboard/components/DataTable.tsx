import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";

/** A column header. `hidden` names a column for screen readers only (one of row buttons); `sort` is its aria-sort. */
export interface Column {
  label: ComponentChildren;
  hidden?: boolean;
  sort?: "ascending" | "descending" | "none";
}

/** The header of the column of row buttons: every table with actions names it the same way. */
export const ACTIONS: Column = { label: "Actions", hidden: true };

/**
 * The dashboard's one way to draw a list: headers with `scope="col"` (so screen readers announce a cell's column),
 * an optional caption, one row per item and, when there are none, a message after the table. Pages give only the
 * cells of a row, so every list gets the same structure and styles.
 */
export function DataTable<T>({
  columns,
  rows,
  row,
  rowKey,
  caption,
  empty,
  class: className = "list",
}: {
  columns: (string | Column)[];
  /** Undefined while loading: the table stands with its headers and no rows. */
  rows: readonly T[] | undefined;
  /** The cells of one row (`<td>`, or `<th scope="row">` for a row's name). */
  row(item: T): ComponentChildren;
  /** Keys rows that move (a live tail that grows at the top), so Preact keeps each row's DOM with its item. */
  rowKey?(item: T): string;
  caption?: ComponentChildren;
  /** Shown after the table when `rows` is an empty list. */
  empty?: ComponentChildren;
  class?: string;
}) {
  // A table wider than its box (a phone) scrolls sideways in place; then its box takes focus, so a keyboard scrolls it too.
  const box = useRef<HTMLDivElement>(null);
  const [scrolls, setScrolls] = useState(false);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const check = () => setScrolls(element.scrollWidth > element.clientWidth + 1);
    check();
    const observer = new ResizeObserver(check);
    observer.observe(element);
    if (element.firstElementChild) observer.observe(element.firstElementChild);
    return () => observer.disconnect();
  }, []);
  return (
    <>
      <div class="table-scroll" ref={box} {...(scrolls ? { tabIndex: 0, role: "region", "aria-label": typeof caption === "string" ? caption : "Table (scrolls sideways)" } : {})}>
      <table class={className}>
        {caption && <caption>{caption}</caption>}
        <thead>
          <tr>
            {columns.map((column) => {
              const { label, hidden, sort } = typeof column === "string" ? ({ label: column } as Column) : column;
              return (
                <th scope="col" aria-sort={sort}>
                  {hidden ? <span class="visually-hidden">{label}</span> : label}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>{rows?.map((item) => <tr key={rowKey?.(item)}>{row(item)}</tr>)}</tbody>
      </table>
      </div>
      {rows && rows.length === 0 && empty}
    </>
  );
}
