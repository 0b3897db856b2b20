import { ANONYMOUS_ACTOR, actorOf, type Actor } from "../../accounts/principal.js";
import type { RouteContext } from "./route.js";
import { ServiceError } from "../../errors/catalogue.js";
import type { Services } from "./services.js";
import type { ChangeBodies, ChangeEnvelope, ChangeOf, ChangeResults, ChangeType } from "../../management/changes.js";
import { newEnvelope } from "../../management/envelope.js";
import { changeNotesOf } from "./change-notes.js";

/** The envelope of a change a route is about to make: the caller as actor (or `actor`), the client address, now. */
export function envelopeFor(context: RouteContext<Services>, actor?: Actor): ChangeEnvelope {
  const principal = context.principal;
  const who = actor ?? (principal.kind === "admin" || principal.kind === "member" || principal.kind === "token" ? actorOf(principal) : ANONYMOUS_ACTOR);
  const isManagement = principal.kind === "admin" || principal.kind === "member" || principal.kind === "token";
  return { ...newEnvelope(who, context.request.remoteAddress() || null), ...(isManagement ? changeNotesOf(context.request) : {}) };
}

/**
 * Submits a change through the management log and answers with what apply returned, or throws the error it was
 * refused with. Routes decide the envelope first when their plan needs its time (`envelopeFor`).
 */
export async function submitChange<T extends ChangeType>(
  context: RouteContext<Services>,
  type: T,
  body: ChangeBodies[T],
  envelope: ChangeEnvelope = envelopeFor(context),
): Promise<ChangeResults[T]> {
  // A body of type T with its envelope is a ChangeOf<T>; TypeScript cannot follow the generic spread.
  const change = { ...envelope, type, ...body } as unknown as ChangeOf<T>;
  const outcome = await context.services.management.submit(change);
  if (!outcome.ok) throw ServiceError.fromData(outcome.error);
  return outcome.value;
}
