import type { App } from "../api";
import { api, enc, get, type EnvironmentFeature } from "../api";
import { describe, stateOf, type Filter, type Rule } from "../rules/model";
import { Card } from "../components/Card";
import { ACTIONS, DataTable } from "../components/DataTable";
import { useAction } from "../hooks/useAction";
import { ErrorMessage, useLoad } from "../ui";

type Targeting = EnvironmentFeature["targeting"];

/**
 * The same feature's targeting in the app's other environments, side by side with the one being edited, and a way
 * to copy one of them here (a new version in this environment, as any save).
 */
export function OtherEnvironments({ app, environmentId, featureKey, canWrite, onCopied }: { app: App; environmentId: string; featureKey: string; canWrite: boolean; onCopied(message: string): void }) {
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
  if (others.length === 0) return null;
  const copy = async (name: string, targeting: Targeting) => {
    if (!confirm(`Replace this environment's targeting with ${name}'s? This saves a new version here.`)) return;
    await copying.run(async () => {
      const answer = await api<{ targeting: { version: number } }>("PUT", `/admin/environments/${enc(environmentId)}/features/${enc(featureKey)}/targeting`, {
        rules: targeting.segmentRules ?? targeting.rules,
      });
      onCopied(`Copied ${name}'s targeting: saved as version ${answer.targeting.version}.`);
    });
  };
  return (
    <Card id="other-environments-title" title="Other environments">
      <ErrorMessage error={loaded.error ?? copying.error} />
      <DataTable
        columns={["Environment", "State", "Version", "Rules", ACTIONS]}
        rows={loaded.data}
        row={({ environment, targeting }) => {
          const state = stateOf(targeting.rules as Rule[]);
          const authored = (targeting.segmentRules ?? targeting.rules) as { filter: Filter }[];
          return (
            <>
              <th scope="row">{environment.name}</th>
              <td>
                <span class={`state state-${state}`}>{state}</span>
              </td>
              <td>{targeting.version}</td>
              <td>{authored.length === 0 ? <span class="muted">no rules</span> : authored.map((rule) => describe(rule.filter)).join("; ")}</td>
              <td>
                {canWrite && authored.length > 0 && (
                  <button type="button" class="link" onClick={() => copy(environment.name, targeting)}>
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
