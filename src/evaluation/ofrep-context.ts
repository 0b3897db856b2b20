/**
 * An OpenFeature evaluation context as our context (API.md §14 → §3): `targetingKey` is the user's id, `user`,
 * `company` and `other` are those namespaces, `companyId` the company's id, and any other top-level attribute an
 * attribute of the user. Pure: no I/O.
 */
import type { OfrepContext } from "../schemas/ofrep.js";

/** Top-level members that name a namespace or an id rather than a user attribute. */
const MAPPED: ReadonlySet<string> = new Set(["targetingKey", "companyId", "user", "company", "other"]);

/** An id as the rest of the service holds it (API.md §2: numbers arrive, strings are stored). */
function idText(value: unknown): unknown {
  return typeof value === "number" ? String(value) : value;
}

/**
 * The nested context `GET /features/evaluated` would build for the same attributes. What the request states more
 * precisely wins: `user.id` over `targetingKey`, `company.id` over `companyId`, an attribute inside `user` over the
 * same one at the top level. A namespace neither sent nor given an attribute is left out, as a query without its
 * parameters would; one sent empty stays (`/features/evaluated` reads `context.user=` as an empty user too).
 */
export function contextOfOfrep(context: OfrepContext): Record<string, unknown> {
  // Spreads copy own properties as data: a key such as "constructor" stays a plain attribute.
  const user: Record<string, unknown> = { ...context.user };
  const company: Record<string, unknown> = { ...context.company };
  const other: Record<string, unknown> = { ...context.other };
  for (const name of Object.keys(context)) {
    // parseJsonBody refused "__proto__" keys, the one name whose assignment would not make a property.
    if (!MAPPED.has(name) && !Object.hasOwn(user, name)) user[name] = context[name];
  }
  if (context.targetingKey !== undefined && context.targetingKey !== "" && !Object.hasOwn(user, "id")) user.id = context.targetingKey;
  if (context.companyId !== undefined && context.companyId !== "" && !Object.hasOwn(company, "id")) company.id = context.companyId;
  if (Object.hasOwn(user, "id")) user.id = idText(user.id);
  if (Object.hasOwn(company, "id")) company.id = idText(company.id);
  const mapped: Record<string, unknown> = {};
  if (context.user !== undefined || Object.keys(user).length > 0) mapped.user = user;
  if (context.company !== undefined || Object.keys(company).length > 0) mapped.company = company;
  if (context.other !== undefined) mapped.other = other;
  return mapped;
}
