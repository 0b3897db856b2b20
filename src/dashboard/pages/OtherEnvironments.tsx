import { api, enc, get, type EnvironmentFeature } from "../api";
import type { Scope } from "../scope";
import { useConfirm } from "../components/ConfirmDialog";
import { describe, stateOf, type Filter, type Rule } from "../rules/model";
import { Card } from "../components/Card";
import { ACTIONS, DataTable } from "../components/DataTable";
import { useAction } from "../hooks/useAction";
import { ErrorMessage, useLoad } from "../ui";
import { scopedPath } from "../router";

type Targeting = EnvironmentFeature["targeting"];

/**
 * The same feature's targeting in the app's other environments, side by side with the one being edited, and a way
 * to copy one of them here (a new version in this environment, as any save).
 */
export function OtherEnvironments({ scope, featureKey, onCopied }: { scope: Scope; featureKey: string; onCopied(message: string): void }) {
  const { app, environmentId, canWrite } = scope;
  const others = app.environments.filter((environment) => environment.id !== environmentId);
  const loaded = useLoad(
    () =>
      Promise.all(
        others.map((environment) =>
          get<{ targeting: Targeting }>(`/admin/environments/${enc(environment.id)}/features/${enc(featureKey)}`).then((answer) => ({ environment, targeting: answer.targeting })),
        ),
      ),
    [app.id, environmentId, featureKey],
  );
  const copying = useAction();
  const confirm = useConfirm();
  if (others.length === 0) return null;
  const copy = async (name: string, targeting: Targeting) => {
    const confirmed = await confirm.ask({
      title: `Copy ${name}'s rules into ${scope.environment.name}?`,
      message: `${scope.environment.name}'s targeting is replaced by ${name}'s, as a new version here; ${name} is not changed.`,
      confirm: "Copy rules",
    });
    if (!confirmed) return;
    await copying.run(async () => {
      const answer = await api<{ targeting: { version: number } }>("PUT", `/admin/environments/${enc(environmentId)}/features/${enc(featureKey)}/targeting`, {
        rules: targeting.segmentRules ?? targeting.rules,
      });
      onCopied(`Copied ${name}'s targeting: saved as version ${answer.targeting.version}.`);
    });
  };
  return (
    <Card id="other-environments-title" title="Other environments">
      {confirm.dialog}
      <ErrorMessage error={loaded.error ?? copying.error} />
      <DataTable
        columns={["Environment", "State", "Version", "Rules", ACTIONS]}
        rows={loaded.data}
        row={({ environment, targeting }) => {
          const state = stateOf(targeting.rules as Rule[]);
          const authored = (targeting.segmentRules ?? targeting.rules) as { filter: Filter }[];
          return (
            <>
              <th scope="row">
                <a href={`#${scopedPath(app.id, environment.id, "features", featureKey)}`}>{environment.name}</a>
              </th>
              <td>
                <span class={`state state-${state}`}>{state}</span>
              </td>
              <td>{targeting.version}</td>
              <td>{authored.length === 0 ? <span class="muted">no rules</span> : authored.map((rule) => describe(rule.filter)).join("; ")}</td>
              <td>
                {canWrite && authored.length > 0 && (
                  <button type="button" class="link" disabled={copying.busy} onClick={() => copy(environment.name, targeting)}>
                    Copy {environment.name}'s rules here
                  </button>
                )}
              </td>
            </>
          );
        }}
      />
    </Card>
  );
}
