import { readPassword } from "./password-input.js";

async function json(response: Response, what: string): Promise<Record<string, any>> {
  const text = await response.text();
  let parsed: Record<string, any>;
  try {
    parsed = JSON.parse(text) as Record<string, any>;
  } catch {
    throw new Error(`${what}: HTTP ${response.status}, not JSON`);
  }
  if (!response.ok || parsed.success !== true) throw new Error(`${what}: HTTP ${response.status} ${JSON.stringify(parsed.error ?? parsed)}`);
  return parsed;
}

/**
 * `switchyard tokens create NAME --email EMAIL`: a member's first API token without the dashboard. Signs in as the
 * member (password from stdin or the terminal), creates the token through that session (with its CSRF token), signs
 * out again, and answers what the service answered: the secret, shown this once.
 */
export async function createTokenAsMember(baseUrl: string, email: string, name: string, readOnly: boolean): Promise<Record<string, unknown>> {
  const password = await readPassword(`Password for ${email}`);
  const signIn = await fetch(new URL("/admin/session", baseUrl), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  const session = await json(signIn, "sign-in");
  const cookie = /switchyard_session=([^;]*)/.exec(signIn.headers.get("set-cookie") ?? "")?.[1];
  if (!cookie) throw new Error("sign-in: no session cookie in the answer");
  const headers = { cookie: `switchyard_session=${cookie}`, "x-csrf-token": String(session.csrfToken), "content-type": "application/json" };
  try {
    return await json(await fetch(new URL("/admin/tokens", baseUrl), { method: "POST", headers, body: JSON.stringify({ name, readOnly }) }), "create token");
  } finally {
    await fetch(new URL("/admin/session", baseUrl), { method: "DELETE", headers });
  }
}
