/** A named control's value in a submitted form (uncontrolled forms: the DOM holds the values until submit). */
export function formValue(form: HTMLFormElement, name: string): string {
  return (form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement).value;
}

/** Whether a named checkbox of a submitted form is ticked. */
export function formChecked(form: HTMLFormElement, name: string): boolean {
  return (form.elements.namedItem(name) as HTMLInputElement).checked;
}
