import { useEffect, useState } from "preact/hooks";

/** Copies text: the Clipboard API where the page is a secure context, else a selected textarea (plain http on a LAN). */
export async function copyText(text: string): Promise<void> {
  if (navigator.clipboard && isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.className = "offscreen";
  document.body.append(area);
  area.select();
  const copied = document.execCommand("copy");
  area.remove();
  if (!copied) throw new Error("The browser refused to copy: select the text and copy it by hand.");
}

/** A copy control: its name says what it copies; "Copied" shows (and is announced) once it is on the clipboard. */
export function CopyButton({ text, label, class: className = "secondary" }: { text: string; label: string; class?: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => {
    if (state === "idle") return;
    const timer = setTimeout(() => setState("idle"), 2500);
    return () => clearTimeout(timer);
  }, [state]);
  // The name is "Copy" and what it copies (visible text first, so speech input finds it); "Copied" shows beside it.
  const what = label.replace(/^Copy\s*/, "");
  return (
    <span class="copy">
      <button type="button" class={`copy-button ${className}`} onClick={() => copyText(text).then(() => setState("copied"), () => setState("failed"))}>
        Copy<span class="visually-hidden"> {what}</span>
      </button>
      <span aria-live="polite" class={state === "failed" ? "copy-status field-error" : "copy-status"}>
        {state === "copied" ? "Copied" : state === "failed" ? "Could not copy: select the text and copy it." : ""}
      </span>
    </span>
  );
}
