import type { ComponentChildren } from "preact";

/** A titled card: the section is a landmark named by its own heading (aria-labelledby), so `id` must be unique. */
export function Card({ id, title, children }: { id: string; title: ComponentChildren; children: ComponentChildren }) {
  return (
    <section class="card" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}
