import { describe, type Filter } from "../rules/model";
import type { ListDiff, RequestChange, RequestPrerequisite, RuleChange } from "../governance";
import { duration } from "../release";

const TAG: Record<RuleChange, string> = { added: "Added", removed: "Removed", changed: "Changed", unchanged: "Unchanged" };

type Variant = { key?: string; payload?: unknown; filter?: Filter };

function ruleText(rule: unknown, segmentNames: ReadonlyMap<string, string>): string {
  const filter = (rule as { filter?: Filter } | undefined)?.filter;
  return filter ? describe(filter, segmentNames) : JSON.stringify(rule);
}

function variantText(value: unknown, segmentNames: ReadonlyMap<string, string>): string {
  const variant = value as Variant;
  const payload = JSON.stringify(variant.payload ?? null);
  return `${variant.key ?? "(no key)"}: payload ${payload.length > 80 ? `${payload.slice(0, 77)}…` : payload}${variant.filter ? `, for ${describe(variant.filter, segmentNames)}` : ""}`;
}

/** How many rules each kind of change touched: "1 added, 1 changed". */
function tally(diff: ListDiff): string {
  const counts = (["added", "changed", "removed"] as const).map((kind) => [kind, diff.rules.filter((rule) => rule.change === kind).length] as const).filter(([, count]) => count > 0);
  return counts.length === 0 ? "no change" : counts.map(([kind, count]) => `${count} ${kind}`).join(", ");
}

/** One list (rules or variants) rule by rule, as a reviewer reads it: what is added, removed, changed (before → after). */
function ListChanges({ diff, noun, text }: { diff: ListDiff; noun: string; text(value: unknown): string }) {
  if (diff.rules.length === 0) return <p class="empty-inline">No {noun}s before or after: off for everyone.</p>;
  return (
    <ol class="rule-diff">
      {diff.rules.map(({ index, change }) => (
        <li class={`diff-row diff-row-${change}`}>
          <span class={`diff-tag diff-tag-${change}`}>{TAG[change]}</span>{" "}
          <span class="diff-what">
            {noun} {index + 1}
            {change === "changed" ? (
              <>
                <span class="diff-before">
                  <span class="muted">before:</span> {text(diff.from[index])}
                </span>
                <span class="diff-after">
                  <span class="muted">after:</span> {text(diff.to[index])}
                </span>
              </>
            ) : (
              <>: {text(change === "removed" ? diff.from[index] : diff.to[index])}</>
            )}
          </span>
        </li>
      ))}
    </ol>
  );
}

const condition = (prerequisite: RequestPrerequisite) => `${prerequisite.feature} must be ${prerequisite.enabled ? "on" : "off"}`;

/** Prerequisites by feature, as a reviewer reads them: which are added, removed, flipped, or kept. */
function PrerequisiteChanges({ from, to }: { from: RequestPrerequisite[]; to: RequestPrerequisite[] }) {
  const before = new Map(from.map((prerequisite) => [prerequisite.feature, prerequisite]));
  const after = new Map(to.map((prerequisite) => [prerequisite.feature, prerequisite]));
  const rows: { change: RuleChange; text: string }[] = [
    ...to.map((prerequisite) => {
      const old = before.get(prerequisite.feature);
      if (old === undefined) return { change: "added" as const, text: condition(prerequisite) };
      return old.enabled === prerequisite.enabled ? { change: "unchanged" as const, text: condition(prerequisite) } : { change: "changed" as const, text: `${condition(old)} → ${condition(prerequisite)}` };
    }),
    ...from.filter((prerequisite) => !after.has(prerequisite.feature)).map((prerequisite) => ({ change: "removed" as const, text: condition(prerequisite) })),
  ];
  if (rows.length === 0) return <p class="empty-inline">No prerequisites before or after.</p>;
  return (
    <ol class="rule-diff">
      {rows.map(({ change, text }) => (
        <li class={`diff-row diff-row-${change}`}>
          <span class={`diff-tag diff-tag-${change}`}>{TAG[change]}</span> <span class="diff-what">{text}</span>
        </li>
      ))}
    </ol>
  );
}

/**
 * One feature's proposed change against the rules it has now. `applied` requests compare with rules they wrote, so
 * they read as unchanged; a base older than the feature's current version is said, since applying would conflict.
 */
export function ChangeDiff({ change, link, segmentNames, settled }: { change: RequestChange; link: string; segmentNames: ReadonlyMap<string, string>; settled: boolean }) {
  const { diff, base } = change;
  const staleTargeting = change.targeting !== undefined && base.targetingVersion !== diff.current.targetingVersion;
  const staleConfig = change.config !== undefined && base.configVersion !== diff.current.configVersion;
  const staleSwitch = change.enabled !== undefined && base.enabledVersion !== diff.current.enabledVersion;
  const stalePrerequisites = change.prerequisites !== undefined && base.prerequisitesVersion !== diff.current.prerequisitesVersion;
  const staleWhat = staleTargeting
    ? `targeting version ${base.targetingVersion} → ${diff.current.targetingVersion}`
    : staleConfig
      ? `config version ${base.configVersion} → ${diff.current.configVersion}`
      : staleSwitch
        ? "its kill switch moved"
        : "its prerequisites changed";
  return (
    <section class="change" aria-labelledby={`change-${change.feature}`}>
      <h3 id={`change-${change.feature}`}>
        <a href={link}>{change.feature}</a>
      </h3>
      {!settled && (staleTargeting || staleConfig || staleSwitch || stalePrerequisites) && (
        <p class="warning">
          {change.feature} changed since this request was made ({staleWhat}): applying
          it would conflict. Its author edits the request onto the current rules.
        </p>
      )}
      {diff.targeting && (
        <div class="change-part">
          <h4>
            Targeting <span class="muted small">({tally(diff.targeting)}; based on version {base.targetingVersion})</span>
          </h4>
          <ListChanges diff={diff.targeting} noun="Rule" text={(rule) => ruleText(rule, segmentNames)} />
        </div>
      )}
      {change.rollout && (
        <div class="change-part">
          <h4>Guarded rollout</h4>
          <p>
            Applying starts a rollout: steps {change.rollout.steps.join(", ")} %, {duration(change.rollout.stepSeconds)} each, at least {change.rollout.minExposures} units per group, by{" "}
            {change.rollout.attribute === "user.id" ? "user" : "company"}; guards:{" "}
            {change.rollout.guards.length === 0
              ? "none"
              : change.rollout.guards.map((guard) => `${guard.event} (${guard.direction === "lower_is_better" ? "lower" : "higher"} is better, ±${Math.round(guard.maxRelativeChange * 1000) / 10} %)`).join(", ")}
            ; on a breach: {change.rollout.onBreach === "pause" ? "pause" : "roll back"}.
          </p>
        </div>
      )}
      {diff.enabled && (
        <div class="change-part">
          <h4>Kill switch</h4>
          <p>
            {diff.enabled.changed
              ? `Applying turns ${change.feature} ${diff.enabled.to ? "back on: its rules are served again" : "off for everyone (its rules are kept)"}.`
              : `${change.feature} is already ${diff.enabled.to ? "on" : "off"}: no change.`}
          </p>
        </div>
      )}
      {diff.prerequisites && (
        <div class="change-part">
          <h4>Prerequisites</h4>
          <PrerequisiteChanges from={diff.prerequisites.from} to={diff.prerequisites.to} />
        </div>
      )}
      {diff.config && (
        <div class="change-part">
          <h4>
            Remote config <span class="muted small">({tally(diff.config)}; based on version {base.configVersion})</span>
          </h4>
          <ListChanges diff={diff.config} noun="Variant" text={(variant) => variantText(variant, segmentNames)} />
        </div>
      )}
    </section>
  );
}
