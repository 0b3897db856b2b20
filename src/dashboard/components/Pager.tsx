import { useCallback, useState } from "preact/hooks";

/**
 * Cursor paging as the API pages (API.md §6): the cursors of the pages seen so far, so "previous" goes back without
 * the API having to page backwards. `cursor` is the one to ask with (undefined on the first page).
 */
export interface CursorPages {
  cursor: string | undefined;
  atFirst: boolean;
  previous(): void;
  next(cursor: string): void;
  /** Back to the first page: a new filter or scope starts there. */
  first(): void;
}

export function useCursorPages(): CursorPages {
  const [after, setAfter] = useState<string[]>([]);
  const first = useCallback(() => setAfter([]), []);
  return {
    cursor: after[after.length - 1],
    atFirst: after.length === 0,
    previous: () => setAfter(after.slice(0, -1)),
    next: (cursor) => setAfter([...after, cursor]),
    first,
  };
}

/**
 * Previous / next buttons of a paged list; `next` is the cursor of the following page, or none on the last one.
 * Each label is one text node: split in two, Chromium shapes the words apart and the text shifts by a pixel.
 */
export function Pager({ pages, next, noun = "page" }: { pages: CursorPages; next: string | null | undefined | false; noun?: string }) {
  return (
    <div class="actions">
      <button type="button" class="secondary" disabled={pages.atFirst} onClick={pages.previous}>
        {`Previous ${noun}`}
      </button>
      <button type="button" class="secondary" disabled={!next} onClick={() => next && pages.next(next)}>
        {`Next ${noun}`}
      </button>
    </div>
  );
}
