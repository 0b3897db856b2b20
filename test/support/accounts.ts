/** Members, sessions and tokens for the accounts suites: everything through the real HTTP API. */
import { request, type JsonReply } from "./http.js";

/** scrypt at 2^14 instead of 2^17: the same code path, sign-ins in milliseconds instead of a quarter second. */
export const ACCOUNT_TEST_ENV = { SWITCHYARD_PASSWORD_COST: "14" } as const;
export const PASSWORD = "correct horse battery staple";

export interface Session {
  /** The cookie value (the session secret). */
  cookie: string;
  csrfToken: string;
  memberId: string;
}

export interface Member {
  id: string;
  email: string;
  role: string;
}

/** Creates a member with the admin token (or any credential allowed to). */
export async function createMember(url: string, adminToken: string, email: string, role: string, password = PASSWORD): Promise<Member> {
  const reply = await request(url, "POST", "/admin/members", { token: adminToken, body: { email, role, password } });
  if (reply.status !== 200) throw new Error(`create member failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body.member as Member;
}

/** The `switchyard_session` value of a Set-Cookie header, if any. */
export function sessionCookieOf(headers: Headers): string | undefined {
  const header = headers.get("set-cookie");
  return header ? /switchyard_session=([^;]*)/.exec(header)?.[1] : undefined;
}

export async function signInReply(url: string, email: string, password: string, headers: Record<string, string> = {}): Promise<JsonReply> {
  return request(url, "POST", "/admin/session", { body: { email, password }, headers });
}

/** Signs in and returns the session; throws unless it worked. */
export async function signIn(url: string, email: string, password = PASSWORD): Promise<Session> {
  const reply = await signInReply(url, email, password);
  const cookie = sessionCookieOf(reply.headers);
  if (reply.status !== 200 || !cookie) throw new Error(`sign-in failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return { cookie, csrfToken: reply.body.csrfToken, memberId: reply.body.member.id };
}

/** A request as a signed-in browser would send it: the cookie, and the CSRF token on anything but GET. */
export function asSession(url: string, session: Session, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<JsonReply> {
  const sent: Record<string, string> = { cookie: `switchyard_session=${session.cookie}`, ...headers };
  if (method !== "GET" && !("x-csrf-token" in headers)) sent["x-csrf-token"] = session.csrfToken;
  return request(url, method, path, { headers: sent, ...(body !== undefined ? { body } : {}) });
}

/** Creates a personal API token as the member of `session`. */
export async function createToken(url: string, session: Session, name: string, readOnly = false): Promise<{ id: string; secret: string }> {
  const reply = await asSession(url, session, "POST", "/admin/tokens", { name, readOnly });
  if (reply.status !== 200) throw new Error(`create token failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return { id: reply.body.token.id, secret: reply.body.secret };
}
