import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { enc, get, type Environment, type EnvironmentFeature } from "../api";
import type { Scope } from "../scope";
import { describe, stateOf, type Filter, type Rule } from "../rules/model";
import { Card } from "../components/Card";
import { DataTable } from "../components/DataTable";
import { PromoteDialog } from "../components/PromoteDialog";
import { ErrorMessage, useLoad } from "../ui";
import { scopedPath } from "../router";

type Rules = Pick<EnvironmentFeature, "targeting" | "config">;

/**
 * The same feature's targeting in the app's other environments, side by side with the one being edited, and a way
 * to promote this environment's rules and config to one of them (docs/API.md §15: the target's policy decides
 * whether that is a write or a change request there).
 */
export function OtherEnvironments({
  scope,
  featureKey,
  source,
  segmentNames,
  onPromoted,
}: {
  scope: Scope;
  featureKey: string;
  source: Rules;
  segmentNames: ReadonlyMap<string, string>;
  onPromoted(message: ComponentChildren): void;
}) {
  const { app, environmentId, canWrite } = scope;
  const others = app.environments.filter((environment) => environment.id !== environmentId);
  const loaded = useLoad(
    () => Promise.all(others.map((environment) => get<Rules>(`/admin/environments/${enc(environment.id)}/features/${enc(featureKey)}`).then((answer) => ({ environment, rules: answer })))),
    [app.id, environmentId, featureKey],
  );
  const [promoting, setPromoting] = useState<{ environment: Environment; rules: Rules } | undefined>();
  if (others.length === 0) return null;
  return (
    <Card id="other-environments-title" title="Other environments">
      {promoting && (
        <PromoteDialog
          scope={scope}
          featureKey={featureKey}
          source={source}
          target={promoting.environment}
          targetRules={promoting.rules}
          segmentNames={segmentNames}
          onCancel={() => setPromoting(undefined)}
          onDone={(message) => {
            setPromoting(undefined);
            loaded.reload();
            onPromoted(message);
          }}
        />
      )}
      <ErrorMessage error={loaded.error} />
      {canWrite && <p class="muted small">Promote copies {scope.environment.name}'s rules and config of {featureKey} to that environment, after showing what changes.</p>}
      <DataTable
        columns={["Environment", "State", "Version", "Rules"]}
        rows={loaded.data}
        row={({ environment, rules }) => {
          const { targeting } = rules;
          const state = stateOf(targeting.rules as Rule[]);
          const authored = (targeting.segmentRules ?? targeting.rules) as { filter: Filter }[];
          return (
            <>
              <th scope="row">
                <a href={`#${scopedPath(app.id, environment.id, "features", featureKey)}`}>{environment.name}</a>
                {canWrite && (
                  // Under the name, not in a column of its own: the side column is too narrow for five columns.
                  <div>
                    <button type="button" class="link small" aria-label={`Promote to ${environment.name}`} onClick={() => setPromoting({ environment, rules })}>
                      Promote
                    </button>
                  </div>
                )}
              </th>
              <td>
                <span class={`state state-${state}`}>{state}</span>
              </td>
              <td>{targeting.version}</td>
              <td>{authored.length === 0 ? <span class="muted">no rules</span> : authored.map((rule) => describe(rule.filter, segmentNames)).join("; ")}</td>
            </>
          );
        }}
      />
    </Card>
  );
}
