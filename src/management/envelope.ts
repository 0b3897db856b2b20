import type { Actor } from "../accounts/principal.js";
import { randomBase62 } from "../tenancy/identifiers.js";
import type { ChangeEnvelope } from "./changes.js";

/** A change's envelope, decided now: a fresh id, the time, who and from where. */
export function newEnvelope(actor: Actor, address: string | null, at: Date = new Date()): ChangeEnvelope {
  return { id: `chg_${randomBase62(20)}`, at: at.toISOString(), actor, address };
}
