import { Field } from "./Field";

/** What a change request proposed from a dialog asks for: a title (prefilled with what the change does) and a description. */
export function ProposalFields({ defaultTitle }: { defaultTitle: string }) {
  return (
    <>
      <Field label="Title" name="title" required maxLength={200} defaultValue={defaultTitle} autoFocus />
      <Field label="Description (optional)">
        <textarea name="description" rows={3} maxLength={5000} />
      </Field>
    </>
  );
}
