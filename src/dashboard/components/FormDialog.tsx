import type { ComponentChildren } from "preact";
import { useModalDialog } from "../hooks/useModalDialog";

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
  const { ref, id } = useModalDialog("form-dialog");
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
