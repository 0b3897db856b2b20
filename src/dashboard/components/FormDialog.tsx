import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";

let nextId = 0;

/**
 * A modal `<dialog>` holding a small form (a comment before saving, a change request's title, a reason): focus moves
 * into it and back to the button that opened it, Escape or Cancel closes it, Enter in a field submits. The submit
 * button names the action.
 */
export function FormDialog({
  title,
  intro,
  submit,
  danger,
  busy,
  onSubmit,
  onCancel,
  children,
}: {
  title: string;
  intro: ComponentChildren;
  submit: string;
  danger?: boolean;
  busy?: boolean;
  onSubmit(form: HTMLFormElement): void;
  onCancel(): void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const [id] = useState(() => `form-dialog-${++nextId}`);
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => {
      if (dialog?.open) dialog.close();
      if (!before?.isConnected) return;
      before.focus();
      // The button that opened it may still be disabled while its action settles: try again once it has.
      if (document.activeElement !== before) requestAnimationFrame(() => before.isConnected && before.focus());
    };
  }, []);
  return (
    <dialog
      ref={ref}
      class="confirm form-dialog"
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-intro`}
      onCancel={(event) => {
        event.preventDefault();
        onCancel();
      }}
    >
      <form
        class="stack"
        onSubmit={(event) => {
          event.preventDefault();
          onSubmit(event.currentTarget);
        }}
      >
        <h2 id={`${id}-title`}>{title}</h2>
        <div id={`${id}-intro`} class="dialog-intro">
          {intro}
        </div>
        {children}
        <div class="actions end">
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
          <button type="submit" class={danger ? "danger-fill" : undefined} disabled={busy}>
            {busy ? "Working…" : submit}
          </button>
        </div>
      </form>
    </dialog>
  );
}
