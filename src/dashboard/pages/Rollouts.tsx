import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { api, enc, get } from "../api";
import { Card } from "../components/Card";
import { DataTable } from "../components/DataTable";
import { Field } from "../components/Field";
import { IntervalChart } from "../components/IntervalChart";
import { StartRollout } from "../components/StartRollout";
import { loadPolicy } from "../governance";
import { duration } from "../release";
import { navigate } from "../router";
import type { Scope } from "../scope";
import { ErrorMessage, Page, useLoad, when } from "../ui";

/** A rollout as the management API answers it (API.md §17). */
export interface Rollout {
  id: string;
  feature: string;
  state: "running" | "paused" | "rolled_back" | "completed" | "cancelled";
  step: number;
  percent: number;
  reason: string | null;
  attribute: string;
  stepSeconds: number;
  minExposures: number;
  onBreach: string;
  steps: { percent: number; startedAt: string | null; targetingVersion: number | null; exposures: { exposed: number; control: number } }[];
  guards: { event: string; direction: "lower_is_better" | "higher_is_better"; maxRelativeChange: number; alpha: number; estimate: number | null; interval: [number, number] | null; breached: boolean }[];
  sampleRatio: { observedShare: number; lower: number; upper: number; mismatch: boolean } | null;
  transitions: { at: string; action: string; step: number; reason: string | null }[];
  createdAt: string;
}

const STATE_LABELS: Record<Rollout["state"], string> = { running: "running", paused: "paused", rolled_back: "rolled back", completed: "completed", cancelled: "cancelled" };
const signed = (value: number) => `${value >= 0 ? "+" : "−"}${Math.abs(value * 100).toFixed(1)} %`;

function StateBadge({ rollout }: { rollout: Rollout }) {
  return <span class={`badge badge-rollout-${rollout.state}`}>{STATE_LABELS[rollout.state]}</span>;
}

/** Every rollout of the environment, newest first, each linking to its feature's rollout page. */
export function Rollouts({ scope }: { scope: Scope }) {
  const rollouts = useLoad(() => get<{ rollouts: Rollout[] }>(`/admin/environments/${enc(scope.environmentId)}/rollouts`).then((answer) => answer.rollouts), [scope.environmentId]);
  return (
    <Page title="Rollouts" subtitle="Guarded rollouts raise a feature's share step by step and roll it back when its guards' tracked events get worse.">
      <ErrorMessage error={rollouts.error} />
      {scope.canWrite && <StartPicker scope={scope} />}
      <DataTable
        caption="Rollouts in this environment"
        columns={["Feature", "State", "Step", "Started"]}
        rows={rollouts.data}
        row={(rollout) => (
          <>
            <th scope="row">
              <a href={scope.link("rollouts", rollout.feature)}>{rollout.feature}</a>
            </th>
            <td>
              <StateBadge rollout={rollout} />
            </td>
            <td>
              {rollout.step + 1} of {rollout.steps.length} ({rollout.percent} %)
            </td>
            <td>{when(rollout.createdAt)}</td>
          </>
        )}
        empty={
          <div class="empty">
            <p>
              <strong>No rollouts yet.</strong> {scope.canWrite ? "Pick a feature above to start one" : "Editors start them from a feature's rollout page"}, or use the API or
              the MCP tool <code>start_rollout</code> (docs/ROLLOUTS.md).
            </p>
          </div>
        }
      />
    </Page>
  );
}

/** Picks the feature to roll out; its rollout page holds the form. Features without rules here cannot be rolled out. */
function StartPicker({ scope }: { scope: Scope }) {
  const features = useLoad(
    () => get<{ features: { key: string; targeting: { rules: unknown[] } }[] }>(`/admin/environments/${enc(scope.environmentId)}/features`).then((answer) => answer.features.filter((feature) => feature.targeting.rules.length > 0)),
    [scope.environmentId],
  );
  const [picked, setPicked] = useState("");
  return (
    <form
      class="inline start-picker"
      aria-label="Start a rollout"
      onSubmit={(event) => {
        event.preventDefault();
        if (picked) navigate(scope.link("rollouts", picked).slice(1));
      }}
    >
      <ErrorMessage error={features.error} />
      <Field label="Feature to roll out (those with targeting rules here)">
        <select value={picked} onChange={(event) => setPicked((event.currentTarget as HTMLSelectElement).value)}>
          <option value="">Pick a feature…</option>
          {features.data?.map((feature) => (
            <option value={feature.key}>{feature.key}</option>
          ))}
        </select>
      </Field>
      <button type="submit" disabled={!picked}>
        Start a rollout…
      </button>
    </form>
  );
}

/** A feature's latest rollout: its steps as a timeline, exposures per group, each guard's interval, and its controls; the start form when none is active. */
export function RolloutDetail({ scope, featureKey }: { scope: Scope; featureKey: string }) {
  const base = `/admin/environments/${enc(scope.environmentId)}/features/${enc(featureKey)}/rollouts`;
  const rollouts = useLoad(() => get<{ rollouts: Rollout[] }>(base).then((answer) => answer.rollouts), [base]);
  const [acting, setActing] = useState<unknown>(undefined);
  const [notice, setNotice] = useState<ComponentChildren>("");
  const [warnings, setWarnings] = useState<{ path: string; message: string }[]>([]);
  const policy = useLoad(() => loadPolicy(scope.environmentId), [scope.environmentId]);
  const rollout = rollouts.data?.[0];
  const act = async (action: "pause" | "resume" | "cancel") => {
    setActing(undefined);
    try {
      const answer = await api<{ rollout: Rollout }>("POST", `${base}/${enc(rollout!.id)}/${action}`);
      setNotice(`Rollout ${STATE_LABELS[answer.rollout.state]}.`);
      setWarnings([]);
      rollouts.reload();
    } catch (error) {
      setActing(error);
    }
  };
  const active = rollout?.state === "running" || rollout?.state === "paused";
  return (
    <Page
      title={`Rollout of ${featureKey}`}
      titleExtra={rollout && <StateBadge rollout={rollout} />}
      actions={
        rollout &&
        active &&
        scope.canWrite && (
          <>
            {rollout.state === "running" ? (
              <button type="button" onClick={() => void act("pause")}>
                Pause
              </button>
            ) : (
              <button type="button" onClick={() => void act("resume")}>
                Resume
              </button>
            )}
            <button type="button" class="secondary danger" onClick={() => void act("cancel")}>
              Cancel rollout
            </button>
          </>
        )
      }
    >
      <div aria-live="polite" class="notice-slot">
        {notice && <p class="notice">{notice}</p>}
        {warnings.length > 0 && (
          <div class="warning" role="status">
            <strong>{warnings.length === 1 ? "A warning" : `${warnings.length} warnings`} about this rollout:</strong>
            <ul>
              {warnings.map((warning) => (
                <li>{warning.message}</li>
              ))}
            </ul>
          </div>
        )}
      </div>
      <ErrorMessage error={rollouts.error ?? acting ?? policy.error} />
      {rollouts.data && !rollout && <p class="empty">No rollout of {featureKey} in this environment yet.</p>}
      {rollouts.data && !active && scope.canWrite && (
        <StartRollout
          scope={scope}
          featureKey={featureKey}
          policy={policy.data}
          onStarted={(answer, message) => {
            setNotice(message);
            setWarnings(answer.warnings);
            rollouts.reload();
          }}
        />
      )}
      {rollout && <RolloutView rollout={rollout} />}
      <p>
        <a href={scope.link("features", featureKey)}>The feature's targeting and history</a> · <a href={scope.link("rollouts")}>All rollouts</a>
      </p>
    </Page>
  );
}

function RolloutView({ rollout }: { rollout: Rollout }) {
  const measured = rollout.guards.filter((guard) => guard.interval !== null && guard.estimate !== null);
  return (
    <>
      {rollout.reason && (
        <p class={rollout.state === "rolled_back" ? "error" : "notice"} role="status">
          {rollout.reason}
        </p>
      )}
      <p class="muted">
        By {rollout.attribute === "company.id" ? "company" : "user"}; {duration(rollout.stepSeconds)} and {rollout.minExposures} units per group each step; on a breach:{" "}
        {rollout.onBreach === "rollback" ? "roll back" : "pause"}.
      </p>
      <Card id="rollout-steps" title="Steps">
        <ol class="timeline">
          {rollout.steps.map((step, index) => (
            <li class={index === rollout.step ? "current" : step.startedAt ? "done" : "next"} aria-current={index === rollout.step ? "step" : undefined}>
              <strong>{step.percent} %</strong> <span class="muted">{step.startedAt ? `from ${when(step.startedAt)}` : "not reached"}</span>
              {step.startedAt && (
                <span>
                  {" "}
                  · exposed {step.exposures.exposed}, control {step.exposures.control}
                </span>
              )}
            </li>
          ))}
        </ol>
      </Card>
      <Card id="rollout-guards" title="Guards">
        {measured.length > 0 && (
          <figure class="chart">
            <figcaption>Change of each guard's event per unit, exposed vs control, with its interval; red: the limit</figcaption>
            <IntervalChart
              rows={measured.map((guard) => ({
                label: guard.event,
                estimate: guard.estimate!,
                lower: guard.interval![0],
                upper: guard.interval![1],
                limit: guard.direction === "lower_is_better" ? guard.maxRelativeChange : -guard.maxRelativeChange,
              }))}
            />
          </figure>
        )}
        <DataTable
          caption="Guards on the current step"
          columns={["Event", "Better when", "Limit", "Change", "Interval", "Breached"]}
          rows={rollout.guards}
          row={(guard) => (
            <>
              <th scope="row">{guard.event}</th>
              <td>{guard.direction === "lower_is_better" ? "lower" : "higher"}</td>
              <td>{signed(guard.direction === "lower_is_better" ? guard.maxRelativeChange : -guard.maxRelativeChange)}</td>
              <td>{guard.estimate === null ? "not yet (30 units per group)" : signed(guard.estimate)}</td>
              <td>{guard.interval ? `${signed(guard.interval[0])} to ${signed(guard.interval[1])}` : "—"}</td>
              <td>{guard.breached ? "yes" : "no"}</td>
            </>
          )}
          empty={<p class="muted">No guards: the rollout only waits out its steps.</p>}
        />
        {rollout.sampleRatio && (
          <p class="muted">
            Exposed share of the step's units: {(rollout.sampleRatio.observedShare * 100).toFixed(1)} % (expected {rollout.percent} %){rollout.sampleRatio.mismatch ? " — mismatch" : ""}.
          </p>
        )}
      </Card>
      <Card id="rollout-transitions" title="Transitions">
        <DataTable
          caption="What happened, oldest first"
          columns={["When", "What", "Step", "Why"]}
          rows={rollout.transitions}
          row={(transition) => (
            <>
              <td>{when(transition.at)}</td>
              <td>{transition.action.replace("rollout.", "").replace("_", " ")}</td>
              <td>{rollout.steps[transition.step]?.percent} %</td>
              <td>{transition.reason ?? "—"}</td>
            </>
          )}
        />
      </Card>
    </>
  );
}
