import { useCallback, useState } from "preact/hooks";

/**
 * One kind of user action against the API (a form's submit, a row's buttons): its error stays on the page until a
 * later try succeeds, and `busy` is true while one runs, so a submit button can refuse a second click.
 */
export function useAction(): { error: unknown; busy: boolean; run(action: () => Promise<unknown>): Promise<void> } {
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const run = useCallback(async (action: () => Promise<unknown>) => {
    setBusy(true);
    try {
      await action();
      setError(undefined);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }, []);
  return { error, busy, run };
}
