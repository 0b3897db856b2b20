import type { AdminClient } from "./admin-client.js";
import { readPassword } from "./password-input.js";

type Values = Record<string, string | boolean | undefined>;

/** A member named by id or by email (the CLI looks the email up). */
async function memberId(client: AdminClient, idOrEmail: string | undefined): Promise<string> {
  if (!idOrEmail) throw new Error("Missing MEMBER (an id or an email).");
  if (!idOrEmail.includes("@")) return encodeURIComponent(idOrEmail);
  const { members } = (await client.call("GET", "/admin/members")) as { members: { id: string; email: string }[] };
  const found = members.find((member) => member.email === idOrEmail.trim().toLowerCase());
  if (!found) throw new Error(`No member with email ${idOrEmail}.`);
  return encodeURIComponent(found.id);
}

/** `switchyard members …` */
export async function members(client: AdminClient, action: string | undefined, first: string | undefined, values: Values): Promise<unknown> {
  switch (action) {
    case "list":
      return client.call("GET", "/admin/members");
    case "add": {
      if (!first) throw new Error("Missing EMAIL.");
      if (typeof values.role !== "string") throw new Error("Missing --role owner|editor|viewer.");
      const body: Record<string, unknown> = { email: first, role: values.role, password: await readPassword(`Password for ${first}`) };
      if (typeof values.name === "string") body.name = values.name;
      return client.call("POST", "/admin/members", body);
    }
    case "update": {
      const id = await memberId(client, first);
      const body: Record<string, unknown> = {};
      if (typeof values.role === "string") body.role = values.role;
      if (typeof values.name === "string") body.name = values.name;
      if (values.password === true) body.password = await readPassword("New password");
      return client.call("PATCH", `/admin/members/${id}`, body);
    }
    case "remove":
      return client.call("DELETE", `/admin/members/${await memberId(client, first)}`);
    case "reset-password":
      // The one-time link is the reset path: no mail server is assumed, so it is printed for the owner to pass on.
      return client.call("POST", `/admin/members/${await memberId(client, first)}/password-reset`);
    default:
      throw new Error("Usage: switchyard members list | add EMAIL --role R [--name N] | update MEMBER [--role R] [--name N] [--password] | remove MEMBER | reset-password MEMBER");
  }
}

/** `switchyard tokens …` */
export async function tokens(client: AdminClient, action: string | undefined, first: string | undefined, values: Values): Promise<unknown> {
  switch (action) {
    case "list":
      return client.call("GET", "/admin/tokens");
    case "create":
      if (!first) throw new Error("Missing NAME.");
      return client.call("POST", "/admin/tokens", { name: first, readOnly: values["read-only"] === true });
    case "revoke":
      if (!first) throw new Error("Missing TOKEN_ID.");
      return client.call("DELETE", `/admin/tokens/${encodeURIComponent(first)}`);
    default:
      throw new Error("Usage: switchyard tokens list | create NAME [--read-only] | revoke TOKEN_ID");
  }
}

/** `switchyard audit [--entity K] [--actor ID] [--after C] [--limit N]` */
export function audit(client: AdminClient, values: Values): Promise<unknown> {
  const query = new URLSearchParams();
  for (const name of ["entity", "actor", "after", "limit"]) if (typeof values[name] === "string") query.set(name, values[name] as string);
  return client.call("GET", `/admin/audit${query.size > 0 ? `?${query}` : ""}`);
}

/** `switchyard admin-token status | rotate | disable` (online; `reset` is handled offline by the caller). */
export function adminTokenCommand(client: AdminClient, action: string | undefined): Promise<unknown> {
  switch (action) {
    case "status":
      return client.call("GET", "/admin/admin-token");
    case "rotate":
      return client.call("POST", "/admin/admin-token/rotate");
    case "disable":
      return client.call("DELETE", "/admin/admin-token");
    default:
      throw new Error("Usage: switchyard admin-token status | rotate | disable | reset");
  }
}
