import { useScope } from "../scope";
import { enc } from "../api";
import { scopedPath } from "../router";

/** A link to a tracked user's, company's or feature's page in the current app and environment, or "—" where there is none. */
export function EntityLink({ kind, id, children }: { kind: "users" | "companies" | "features"; id: string | null | undefined; children?: preact.ComponentChildren }) {
  const scope = useScope();
  if (!id) return <>—</>;
  return <a href={scope ? `#${scopedPath(scope.app.id, scope.environment.id, kind, id)}` : `#/${kind}/${enc(id)}`}>{children ?? id}</a>;
}
