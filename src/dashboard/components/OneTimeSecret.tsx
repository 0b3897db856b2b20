import type { ComponentChildren } from "preact";

/**
 * A secret the API shows once (a new token, a reset link): announced as a status, so a screen reader hears it
 * without moving focus, and nothing when there is none.
 */
export function OneTimeSecret({ value, children }: { value: string | undefined; children: ComponentChildren }) {
  if (!value) return null;
  return (
    <p class="notice" role="status">
      {children} <code>{value}</code>
    </p>
  );
}
