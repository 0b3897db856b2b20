import type { ComponentChildren, InputHTMLAttributes } from "preact";

/**
 * A labelled form control. The label wraps the control, so it is the control's accessible name without ids; the
 * API's message for the field (docs/ERRORS.md validation issues) stands under it, with aria-invalid on the input.
 * Without children it draws an <input> from the remaining props; with children (a select, a textarea) it wraps
 * those. `suggestions` adds a datalist, so a typed value can also be picked from known ones.
 */
export function Field({
  label,
  error,
  suggestions,
  children,
  class: className,
  ...input
}: {
  label: ComponentChildren;
  error?: string | undefined;
  /** The datalist's id (unique on the page) and its values; undefined values (still loading) give an empty list. */
  suggestions?: { id: string; values: readonly string[] | undefined };
  children?: ComponentChildren;
  class?: string;
} & Omit<InputHTMLAttributes<HTMLInputElement>, "label" | "class" | "children">) {
  return (
    <label class={className}>
      {label}
      {children ?? <input {...input} list={suggestions?.id ?? input.list} aria-invalid={error ? true : undefined} />}
      {suggestions && (
        <datalist id={suggestions.id}>
          {suggestions.values?.map((value) => (
            <option value={value} />
          ))}
        </datalist>
      )}
      {error && <span class="field-error">{error}</span>}
    </label>
  );
}
