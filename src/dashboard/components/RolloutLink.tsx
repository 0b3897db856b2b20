import { enc, get } from "../api";
import type { Rollout } from "../pages/Rollouts";
import type { Scope } from "../scope";
import { useLoad } from "../ui";
import { Card } from "./Card";

const ACTIVE = new Set<Rollout["state"]>(["running", "paused"]);

/** On a feature's page: its guarded rollout here, if one is active, or the way to start one (the rollout page's form). */
export function RolloutLink({ scope, featureKey, canStart }: { scope: Scope; featureKey: string; canStart: boolean }) {
  const rollouts = useLoad(() => get<{ rollouts: Rollout[] }>(`/admin/environments/${enc(scope.environmentId)}/features/${enc(featureKey)}/rollouts`).then((answer) => answer.rollouts), [scope.environmentId, featureKey]);
  const latest = rollouts.data?.[0];
  const link = scope.link("rollouts", featureKey);
  return (
    <Card id="rollout-link-title" title="Guarded rollout">
      {latest && ACTIVE.has(latest.state) ? (
        <p>
          <a href={link}>
            Rollout {latest.state} at {latest.percent} % (step {latest.step + 1} of {latest.steps.length})
          </a>
        </p>
      ) : (
        <>
          <p class="muted small">Raise {featureKey}'s share in {scope.environment.name} step by step, rolled back on its own when a tracked event gets worse.</p>
          {scope.canWrite && canStart ? (
            <a href={link}>Start a guarded rollout</a>
          ) : scope.canWrite ? (
            <p class="muted small">Give {featureKey} targeting rules here first: a rollout raises the share of who they target.</p>
          ) : null}
          {latest && (
            <p class="small">
              <a href={link}>The last rollout ({latest.state.replace("_", " ")})</a>
            </p>
          )}
        </>
      )}
    </Card>
  );
}
