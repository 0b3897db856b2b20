import type { ComponentChildren } from "preact";
import { CopyButton } from "./CopyButton";

/**
 * A secret the API shows once (a new token, a reset link): announced as a status, so a screen reader hears it
 * without moving focus, with a copy control; nothing when there is none.
 */
export function OneTimeSecret({ value, children, copyLabel }: { value: string | undefined; children: ComponentChildren; copyLabel: string }) {
  if (!value) return null;
  return (
    <div class="notice one-time" role="status">
      <p>{children}</p>
      <div class="key-value">
        <code>{value}</code>
        <CopyButton text={value} label={copyLabel} />
      </div>
    </div>
  );
}
