import { useCallback, useRef, useState } from "preact/hooks";

/**
 * One kind of user action against the API (a form's submit, a row's buttons): its error stays on the page until a
 * later try succeeds, and `busy` is true while one runs, so a submit button can refuse a second click.
 */
export function useAction(): { error: unknown; busy: boolean; run(action: () => Promise<unknown>): Promise<void> } {
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  // A second click before the page re-renders the disabled button is refused here too (a double click sends one request).
  const running = useRef(false);
  const run = useCallback(async (action: () => Promise<unknown>) => {
    if (running.current) return;
    running.current = true;
    setBusy(true);
    try {
      await action();
      setError(undefined);
    } catch (caught) {
      setError(caught);
    } finally {
      running.current = false;
      setBusy(false);
    }
  }, []);
  return { error, busy, run };
}
