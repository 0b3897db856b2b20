import { enc } from "../api";

/** A link to a tracked user's or company's page, or "—" where an event has none (a user without a company). */
export function EntityLink({ kind, id }: { kind: "users" | "companies" | "features"; id: string | null | undefined }) {
  return id ? <a href={`#/${kind}/${enc(id)}`}>{id}</a> : <>—</>;
}
