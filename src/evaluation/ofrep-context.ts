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
  // The namespaces are used as sent unless something is added to them; a copy is made only then (spreads copy own
  // properties as data: a key such as "constructor" stays a plain attribute).
  let user = context.user;
  let userCopied = false;
  const writableUser = (): Record<string, unknown> => {
    if (!userCopied) {
      user = { ...context.user };
      userCopied = true;
    }
    return user!;
  };
  for (const name of Object.keys(context)) {
    // parseJsonBody refused "__proto__" keys, the one name whose assignment would not make a property.
    if (!MAPPED.has(name) && !(user !== undefined && Object.hasOwn(user, name))) writableUser()[name] = context[name];
  }
  if (context.targetingKey !== undefined && context.targetingKey !== "" && !(user !== undefined && Object.hasOwn(user, "id"))) writableUser().id = context.targetingKey;
  if (user !== undefined && typeof user.id === "number" && Object.hasOwn(user, "id")) writableUser().id = idText(user.id);
  let company = context.company;
  if (context.companyId !== undefined && context.companyId !== "" && !(company !== undefined && Object.hasOwn(company, "id"))) company = { ...company, id: context.companyId };
  if (company !== undefined && typeof company.id === "number" && Object.hasOwn(company, "id")) company = { ...company, id: idText(company.id) };
  const mapped: Record<string, unknown> = {};
  if (user !== undefined) mapped.user = user;
  if (company !== undefined) mapped.company = company;
  if (context.other !== undefined) mapped.other = context.other;
  return mapped;
}
