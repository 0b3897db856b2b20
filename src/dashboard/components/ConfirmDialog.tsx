import { useState } from "preact/hooks";
import { useModalDialog } from "../hooks/useModalDialog";

export interface ConfirmOptions {
  title: string;
  message: string;
  /** The confirming button's words ("Rotate key"); a verb, never "OK". */
  confirm: string;
  danger?: boolean;
}

/**
 * An in-page confirmation (a modal `<dialog>`: focus stays inside, Escape cancels), instead of the browser's
 * `confirm()`, which cannot be styled, names no action and blocks the whole tab. `ask` resolves true when confirmed.
 */
export function useConfirm(): { dialog: preact.JSX.Element | null; ask(options: ConfirmOptions): Promise<boolean> } {
  const [pending, setPending] = useState<{ options: ConfirmOptions; resolve(value: boolean): void } | undefined>();
  const ask = (options: ConfirmOptions) => new Promise<boolean>((resolve) => setPending({ options, resolve }));
  const close = (value: boolean) => {
    pending?.resolve(value);
    setPending(undefined);
  };
  return { dialog: pending ? <ConfirmDialog options={pending.options} onClose={close} /> : null, ask };
}

function ConfirmDialog({ options, onClose }: { options: ConfirmOptions; onClose(confirmed: boolean): void }) {
  const { ref, id } = useModalDialog("confirm");
  return (
    <dialog
      ref={ref}
      class="confirm"
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-message`}
      onCancel={(event) => {
        event.preventDefault();
        onClose(false);
      }}
    >
      <h2 id={`${id}-title`}>{options.title}</h2>
      <p id={`${id}-message`}>{options.message}</p>
      <div class="actions end">
        <button type="button" class="secondary" autoFocus onClick={() => onClose(false)}>
          Cancel
        </button>
        <button type="button" class={options.danger ? "danger-fill" : undefined} onClick={() => onClose(true)}>
          {options.confirm}
        </button>
      </div>
    </dialog>
  );
}
