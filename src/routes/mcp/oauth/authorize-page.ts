/**
 * The server-rendered page where a member approves (or denies) an editor: one click for a member signed in to the
 * dashboard in this browser, else a sign-in and approve form. No script, no external assets; the dashboard's look
 * (colours, type, a card) in one inline style sheet.
 */
import { escapeHtml, htmlPage, pageHeaders } from "../../core/html-page.js";

export const PAGE_HEADERS = pageHeaders("default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'");

/** The card, its form and buttons. */
const STYLE =
  "main{max-width:28rem;margin:8vh auto 2rem;background:#fff;padding:32px;border:1px solid #d6dae1;border-radius:8px;box-shadow:0 1px 3px rgb(0 0 0/6%)}" +
  "@media (max-width:480px){main{margin:0;border:none;border-radius:0;padding:24px 16px}}" +
  "code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em}" +
  "label{display:block;margin:12px 0 4px;font-size:.8125rem;font-weight:500}" +
  "input[type=email],input[type=password]{width:100%;box-sizing:border-box;font:inherit;padding:6px 10px;min-height:36px;border:1px solid #7b8494;border-radius:6px}" +
  ".actions{display:flex;flex-wrap:wrap;gap:8px;margin-top:20px}button{font:inherit;font-weight:500;cursor:pointer;padding:6px 14px;min-height:36px;border-radius:6px;border:1px solid #1d4ed8;background:#1d4ed8;color:#fff}" +
  "button.secondary{background:#fff;color:#1d4ed8;border-color:#b7bec9}:focus-visible{outline:3px solid #f4b400;outline-offset:2px}" +
  ".who{background:#e8eefc;border-radius:6px;padding:8px 12px}" +
  ".muted{color:#4d5562;font-size:.875rem}details{margin-top:20px}summary{cursor:pointer;color:#1d4ed8}";

const layout = (title: string, body: string): string => htmlPage(title, STYLE, body);

export interface ApprovalPage {
  clientName: string;
  redirectHost: string;
  tokenDays: number;
  /** The authorization request's parameters, carried through the form unchanged. */
  params: Record<string, string>;
  email?: string;
  error?: string;
  /** A member signed in to the dashboard in this browser: approving takes one click, with the session's CSRF token. */
  signedIn?: { email: string; csrfToken: string };
}

export function approvalPage(page: ApprovalPage): string {
  const hidden = Object.entries(page.params)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("");
  const deny = `<button type="submit" name="decision" value="deny" class="secondary" formnovalidate>Deny</button>`;
  const passwordForm = (approve: string) =>
    `<form method="post">${hidden}` +
    `<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(page.email ?? "")}">` +
    `<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>` +
    `<div class="actions"><button type="submit" name="decision" value="approve">${approve}</button>${deny}</div></form>`;
  const body = page.signedIn
    ? `<p class="who">Signed in as <strong>${escapeHtml(page.signedIn.email)}</strong>.</p>` +
      `<form method="post">${hidden}<input type="hidden" name="csrf" value="${escapeHtml(page.signedIn.csrfToken)}">` +
      `<div class="actions"><button type="submit" name="decision" value="approve">Approve as ${escapeHtml(page.signedIn.email)}</button>${deny}</div></form>` +
      `<details><summary>Approve as someone else</summary>${passwordForm("Sign in and approve")}</details>`
    : passwordForm("Sign in and approve");
  return layout(
    "Approve an editor — Switchyard",
    `<h1>Approve ${escapeHtml(page.clientName)}</h1>` +
      `<p><strong>${escapeHtml(page.clientName)}</strong> (returning to <code>${escapeHtml(page.redirectHost)}</code>) asks to manage feature flags on this Switchyard as you: ` +
      `read apps, flags and feedback, create flags and change their targeting, with your role.</p>` +
      `<p class="muted">It gets a token that expires in ${page.tokenDays} days and appears in your token list, where you can revoke it.</p>` +
      (page.error ? `<p class="error" role="alert">${escapeHtml(page.error)}</p>` : "") +
      body,
  );
}

export function errorPage(message: string): string {
  return layout("Cannot authorize — Switchyard", `<h1>This authorization request cannot be used</h1><p class="error">${escapeHtml(message)}</p><p class="muted">Start the connection again from your editor.</p>`);
}
