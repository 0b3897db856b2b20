import { useEffect, useRef, useState } from "preact/hooks";

let nextId = 0;

/**
 * A `<dialog>` shown modal for as long as its component is mounted, and an id prefix for its labels. When it closes,
 * focus goes back to where it was before it opened (the button that asked).
 */
export function useModalDialog(prefix: string): { ref: preact.RefObject<HTMLDialogElement>; id: string } {
  const ref = useRef<HTMLDialogElement>(null);
  const [id] = useState(() => `${prefix}-${++nextId}`);
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => {
      // Closed first: while a modal dialog is open, the rest of the page is inert and cannot take focus.
      if (dialog?.open) dialog.close();
      if (!before?.isConnected) return;
      before.focus();
      // The button that opened it may still be disabled while its action settles: try again once it has.
      if (document.activeElement !== before) requestAnimationFrame(() => before.isConnected && before.focus());
    };
  }, []);
  return { ref, id };
}
