import type { ComponentChildren } from "preact";

/** A tab's id (its panel is `panel-<id>`, its button `tab-<id>`) and its label. */
export type TabList<Id extends string> = readonly (readonly [Id, string])[];

/**
 * The tablist of the WAI-ARIA tabs pattern: arrow keys, Home and End move between the tabs and select them; only the
 * selected tab is in the Tab order.
 */
export function Tabs<Id extends string>({ tabs, label, selected, onSelect }: { tabs: TabList<Id>; label: string; selected: Id; onSelect(tab: Id): void }) {
  const move = (event: KeyboardEvent) => {
    const index = tabs.findIndex(([id]) => id === selected);
    const last = tabs.length - 1;
    const next = event.key === "ArrowRight" ? (index + 1) % tabs.length : event.key === "ArrowLeft" ? (index + last) % tabs.length : event.key === "Home" ? 0 : event.key === "End" ? last : -1;
    if (next < 0) return;
    event.preventDefault();
    const [id] = tabs[next]!;
    onSelect(id);
    document.getElementById(`tab-${id}`)?.focus();
  };
  return (
    <div class="feature-tabs" role="tablist" aria-label={label} onKeyDown={move}>
      {tabs.map(([id, text]) => (
        <button type="button" role="tab" id={`tab-${id}`} aria-selected={selected === id} aria-controls={`panel-${id}`} tabIndex={selected === id ? 0 : -1} onClick={() => onSelect(id)}>
          {text}
        </button>
      ))}
    </div>
  );
}

/** A tab's panel: kept mounted while hidden, so what was typed in it survives a look at another tab. */
export function TabPanel<Id extends string>({ id, selected, children }: { id: Id; selected: Id; children: ComponentChildren }) {
  return (
    <div role="tabpanel" id={`panel-${id}`} aria-labelledby={`tab-${id}`} hidden={selected !== id}>
      {children}
    </div>
  );
}
