import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { ApiError } from "../api";
import type { Policy } from "../governance";
import { useAction } from "../hooks/useAction";
import { startRollout, type RolloutGuardSettings, type StartAnswer } from "../release";
import type { Scope } from "../scope";
import { ErrorMessage } from "../ui";
import { Card } from "./Card";
import { Field } from "./Field";
import "./release.css";

const UNIT_SECONDS = { minutes: 60, hours: 3600, days: 86_400 } as const;
type TimeUnit = keyof typeof UNIT_SECONDS;

interface GuardDraft {
  event: string;
  direction: RolloutGuardSettings["direction"];
  /** The largest relative change allowed, in percent as typed ("10" is 0.1). */
  limit: string;
  alpha: string;
}

const NEW_GUARD: GuardDraft = { event: "", direction: "lower_is_better", limit: "10", alpha: "0.05" };
const value = (event: Event) => (event.currentTarget as HTMLInputElement | HTMLSelectElement).value;
/** A typed number as the API takes it; what does not parse goes as typed, so the service names the field. */
const numberOr = (text: string): number | string => (text.trim() !== "" && Number.isFinite(Number(text)) ? Number(text) : text);

/**
 * The form that starts a guarded rollout of one feature (docs/API.md §17): steps, time per step, units per group,
 * the unit, guards and what a breach does. The service checks it; each of its messages stands at its field. Where the
 * environment requires approval the start becomes a change request (an owner may start at once with a reason).
 */
export function StartRollout({ scope, featureKey, policy, onStarted }: { scope: Scope; featureKey: string; policy: Policy | undefined; onStarted(answer: StartAnswer, message: ComponentChildren): void }) {
  const environmentName = scope.environment.name;
  const [steps, setSteps] = useState("1, 5, 10, 25, 50, 100");
  const [time, setTime] = useState("1");
  const [unit, setUnit] = useState<TimeUnit>("hours");
  const [minExposures, setMinExposures] = useState("100");
  const [attribute, setAttribute] = useState<"company.id" | "user.id">("company.id");
  const [guards, setGuards] = useState<GuardDraft[]>([{ ...NEW_GUARD, event: "error" }]);
  const [onBreach, setOnBreach] = useState<"rollback" | "pause">("rollback");
  const [bypass, setBypass] = useState(false);
  const [reason, setReason] = useState("");
  const starting = useAction();
  const held = policy?.requireApproval === true && !bypass;
  const issues = starting.error instanceof ApiError ? starting.error.validationErrors : [];
  const issueAt = (path: string) => issues.filter((issue) => issue.path === path || issue.path.startsWith(`${path}.`)).map((issue) => issue.message).join("; ") || undefined;
  const setGuard = (index: number, change: Partial<GuardDraft>) => setGuards(guards.map((guard, at) => (at === index ? { ...guard, ...change } : guard)));

  const submit = (event: Event) => {
    event.preventDefault();
    void starting.run(async () => {
      const settings = {
        steps: steps.split(/[,\s]+/).filter(Boolean).map((step) => numberOr(step.replace(/%$/, ""))) as number[],
        stepSeconds: (typeof numberOr(time) === "number" ? Math.round(Number(time) * UNIT_SECONDS[unit]) : time) as number,
        minExposures: numberOr(minExposures) as number,
        attribute,
        guards: guards.map((guard) => ({
          event: guard.event.trim(),
          direction: guard.direction,
          maxRelativeChange: (typeof numberOr(guard.limit) === "number" ? Number(guard.limit) / 100 : guard.limit) as number,
          alpha: numberOr(guard.alpha) as number,
        })),
        onBreach,
      };
      const answer = await startRollout(scope.environmentId, featureKey, settings, bypass ? { bypass: true, reason: reason.trim() } : {});
      const request = answer.changeRequest;
      onStarted(
        answer,
        request ? (
          <>
            {environmentName} requires approval, so the rollout starts when change request <a href={scope.link("change-requests", request.id)}>{request.title}</a> is approved and applied.
          </>
        ) : (
          `Rollout started: ${settings.steps[0]} % of ${featureKey}'s targeting in ${environmentName}.`
        ),
      );
    });
  };

  return (
    <Card id="start-rollout-title" title={`Start a guarded rollout of ${featureKey}`}>
      <form class="stack rollout-form" onSubmit={submit} aria-label="Start a guarded rollout" noValidate>
        <p class="muted small">
          Each step serves {featureKey} to that share of the units its targeting in {environmentName} picks; the rest are the control group. A step advances when its time has
          passed and both groups reached the minimum, unless a guard breached.
        </p>
        <Field label="Steps (percent, increasing)" value={steps} error={issueAt("steps")} onInput={(event) => setSteps(value(event))} />
        <div class="rollout-grid">
          <Field label="Time per step" type="number" min={1} value={time} error={issueAt("stepSeconds")} onInput={(event) => setTime(value(event))} />
          <Field label="Time unit">
            <select value={unit} onChange={(event) => setUnit(value(event) as TimeUnit)}>
              <option value="minutes">minutes</option>
              <option value="hours">hours</option>
              <option value="days">days</option>
            </select>
          </Field>
          <Field label="Minimum units per group, each step" type="number" min={1} value={minExposures} error={issueAt("minExposures")} onInput={(event) => setMinExposures(value(event))} />
          <Field label="Unit" error={issueAt("attribute")}>
            <select value={attribute} onChange={(event) => setAttribute(value(event) as typeof attribute)}>
              <option value="company.id">company</option>
              <option value="user.id">user</option>
            </select>
          </Field>
        </div>
        <fieldset class="guards">
          <legend>Guards</legend>
          {guards.length === 0 && <p class="muted small">No guards: the rollout only waits out its steps.</p>}
          {guards.map((guard, index) => (
            <div class="guard-row" role="group" aria-label={`Guard ${index + 1}`}>
              <Field label="Event name" value={guard.event} error={issueAt(`guards.${index}.event`)} onInput={(event) => setGuard(index, { event: value(event) })} />
              <Field label="Better when" error={issueAt(`guards.${index}.direction`)}>
                <select value={guard.direction} onChange={(event) => setGuard(index, { direction: value(event) as GuardDraft["direction"] })}>
                  <option value="lower_is_better">lower (errors, churn)</option>
                  <option value="higher_is_better">higher (conversions)</option>
                </select>
              </Field>
              <Field label="Largest change allowed (%)" type="number" min={0} step="any" value={guard.limit} error={issueAt(`guards.${index}.maxRelativeChange`)} onInput={(event) => setGuard(index, { limit: value(event) })} />
              <Field label="Alpha" type="number" min={0} max={0.5} step="any" value={guard.alpha} error={issueAt(`guards.${index}.alpha`)} onInput={(event) => setGuard(index, { alpha: value(event) })} />
              <button type="button" class="link" aria-label={`Remove guard ${index + 1}`} onClick={() => setGuards(guards.filter((_, at) => at !== index))}>
                Remove
              </button>
            </div>
          ))}
          <button type="button" class="secondary" disabled={guards.length >= 10} onClick={() => setGuards([...guards, { ...NEW_GUARD }])}>
            Add guard
          </button>
        </fieldset>
        <fieldset class="segmented-choice">
          <legend>On a breach</legend>
          <label class="check">
            <input type="radio" name="onBreach" value="rollback" checked={onBreach === "rollback"} onChange={() => setOnBreach("rollback")} />
            Roll back to the rules from before
          </label>
          <label class="check">
            <input type="radio" name="onBreach" value="pause" checked={onBreach === "pause"} onChange={() => setOnBreach("pause")} />
            Pause at the current step
          </label>
          {issueAt("onBreach") && <span class="field-error">{issueAt("onBreach")}</span>}
        </fieldset>
        {policy?.requireApproval && (
          <p class="notice small">
            {environmentName} requires approval{bypass ? ": you start it now, bypassing approval; the audit log keeps your reason." : ": starting opens a change request; the rollout begins once it is applied."}
          </p>
        )}
        {policy?.requireApproval && scope.member.role === "owner" && (
          <label class="check">
            <input type="checkbox" checked={bypass} onChange={(event) => setBypass((event.currentTarget as HTMLInputElement).checked)} />
            As an owner, start now without approval (the audit log keeps the reason)
          </label>
        )}
        {bypass && <Field label="Reason (required)" value={reason} required maxLength={500} error={issueAt("reason")} onInput={(event) => setReason(value(event))} />}
        {issues.length > 0 ? (
          <p class="error" role="alert">
            Not started: {issues.length === 1 ? "one field needs" : `${issues.length} fields need`} fixing, marked above.
          </p>
        ) : (
          <ErrorMessage error={starting.error} />
        )}
        <div class="actions">
          <button type="submit" disabled={starting.busy}>
            {starting.busy ? "Starting…" : held ? "Propose rollout" : "Start rollout"}
          </button>
        </div>
      </form>
    </Card>
  );
}
