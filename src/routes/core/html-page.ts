/**
 * The few pages the service renders itself, without the dashboard's script (the OAuth approval page, the CLI's
 * browser ends): escaping, safe headers, and the dashboard's look (its colours, type, a card with the brand).
 */

export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (character) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[character]!);

/** Never framed (clickjacking), never cached, nothing loaded from elsewhere; `contentSecurityPolicy` per page. */
export function pageHeaders(contentSecurityPolicy: string): Record<string, string> {
  return {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "x-frame-options": "DENY",
    "content-security-policy": contentSecurityPolicy,
    // Not no-referrer: under it browsers send `Origin: null` with a form post, which the login-CSRF check refuses.
    "referrer-policy": "same-origin",
    "x-content-type-options": "nosniff",
  };
}

/** The rules every such page shares; a page adds its card's size (`main`) and its own. */
const SHARED_STYLE =
  "body{margin:0;font:16px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#17202e;background:#f4f6f9}" +
  "h1{font-size:1.5rem;line-height:1.25;margin:0 0 12px}p{margin:0 0 12px}" +
  ".brand{display:flex;align-items:center;gap:8px;font-weight:700;margin-bottom:24px}" +
  ".mark{width:22px;height:22px;border-radius:6px;background:linear-gradient(135deg,#1d4ed8 0 50%,#0f9f6e 50% 100%)}" +
  ".error{background:#fdecec;border:1px solid #f3b8b8;color:#7a1014;padding:8px 12px;border-radius:6px}";

/** A whole page: `title` is escaped here, `body` is HTML the caller escaped. */
export function htmlPage(title: string, style: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title><style>${SHARED_STYLE}${style}</style></head><body><main><div class="brand"><span class="mark" aria-hidden="true"></span>Switchyard</div>${body}</main></body></html>`;
}
