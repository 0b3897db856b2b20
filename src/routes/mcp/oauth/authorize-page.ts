/**
 * The server-rendered page where a member signs in and approves (or denies) an editor. Deliberately plain: no script,
 * no external assets; the dashboard, when it exists, may take this role over.
 */
const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (character) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[character]!);

/** Page headers: never framed (clickjacking), never cached, nothing loaded from elsewhere. */
export const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "x-frame-options": "DENY",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  // Not no-referrer: under it browsers send `Origin: null` with the form post, which the login-CSRF check refuses.
  "referrer-policy": "same-origin",
} as const;

const STYLE =
  "body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1d1d1f}" +
  "label{display:block;margin:.8rem 0 .2rem}input[type=email],input[type=password]{width:100%;padding:.5rem;box-sizing:border-box}" +
  "button{margin:1.2rem .5rem 0 0;padding:.5rem 1.2rem}.error{color:#b00020}.muted{color:#666;font-size:.9rem}";

function layout(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
}

export interface ApprovalPage {
  clientName: string;
  redirectHost: string;
  tokenDays: number;
  /** The authorization request's parameters, carried through the form unchanged. */
  params: Record<string, string>;
  email?: string;
  error?: string;
}

export function approvalPage(page: ApprovalPage): string {
  const hidden = Object.entries(page.params)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("");
  return layout(
    "Approve an editor — Switchyard",
    `<h1>Approve ${escapeHtml(page.clientName)}</h1>` +
      `<p><strong>${escapeHtml(page.clientName)}</strong> (returning to <code>${escapeHtml(page.redirectHost)}</code>) asks to manage feature flags on this Switchyard as you: ` +
      `read apps, flags and feedback, create flags and change their targeting, with your role.</p>` +
      `<p class="muted">It gets a token that expires in ${page.tokenDays} days and appears in your token list, where you can revoke it.</p>` +
      (page.error ? `<p class="error" role="alert">${escapeHtml(page.error)}</p>` : "") +
      `<form method="post">${hidden}` +
      `<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(page.email ?? "")}">` +
      `<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>` +
      `<button type="submit" name="decision" value="approve">Sign in and approve</button>` +
      `<button type="submit" name="decision" value="deny" formnovalidate>Deny</button></form>`,
  );
}

export function errorPage(message: string): string {
  return layout("Cannot authorize — Switchyard", `<h1>This authorization request cannot be used</h1><p class="error">${escapeHtml(message)}</p><p class="muted">Start the connection again from your editor.</p>`);
}
