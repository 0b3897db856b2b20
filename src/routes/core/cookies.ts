/** The browser session cookie (API.md §8). */
export const SESSION_COOKIE = "switchyard_session";

/** The value of one cookie in a `Cookie` header; undefined when absent. Front ends join repeated headers with ", ". */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(/[;,]/)) {
    const equals = part.indexOf("=");
    if (equals === -1) continue;
    if (part.slice(0, equals).trim() === name) return part.slice(equals + 1).trim() || undefined;
  }
  return undefined;
}

/** `HttpOnly` (no script reads it), `SameSite=Strict` (no other site's page sends it), `Secure` behind TLS. */
export function sessionCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAgeSeconds}${secure ? "; Secure" : ""}`;
}

/** Tells the browser to drop the cookie. */
export function clearedSessionCookie(secure: boolean): string {
  return sessionCookie("", 0, secure);
}
