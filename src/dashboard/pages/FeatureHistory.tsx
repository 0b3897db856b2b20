import { useState } from "preact/hooks";
import type { HistoryVersion } from "../api";
import { diffLines } from "../diff";
import { useConfirm } from "../components/ConfirmDialog";
import { useAction } from "../hooks/useAction";
import type { WriteOutcome, WriteSpec } from "../hooks/useGovernedWrite";
import { actorName, ErrorMessage, when } from "../ui";

/**
 * The feature's versions in this environment, newest first, each with its diff and a revert. A revert is a save like
 * any other (`write`): where the policy asks itself (a change request, a comment), its dialog is the only question.
 */
export function History({
  featureKey,
  versions,
  error,
  canWrite,
  policyAsks,
  write,
  onReverted,
  requestLink,
}: {
  featureKey: string;
  /** The `#…` link of a change request of this environment. */
  requestLink(id: string): string;
  versions: HistoryVersion[] | undefined;
  error: unknown;
  canWrite: boolean;
  policyAsks: boolean;
  write(spec: WriteSpec): Promise<WriteOutcome | undefined>;
  onReverted(outcome: WriteOutcome, savedMessage: (version: number) => string): void;
}) {
  const [open, setOpen] = useState<string | undefined>();
  const reverting = useAction();
  const confirm = useConfirm();
  const list = versions ? [...versions].sort((a, b) => (a.at === b.at ? b.version - a.version : b.at.localeCompare(a.at))) : [];
  const bodyOf = (version: HistoryVersion | undefined) => (version ? JSON.stringify(version.kind === "targeting" ? (version.segmentRules ?? version.rules) : version.variants, null, 2) : "");
  const previousOf = (version: HistoryVersion) => versions?.find((each) => each.kind === version.kind && each.version === version.version - 1);
  const revert = async (version: HistoryVersion & { kind: "targeting" | "config" }) => {
    const confirmed = policyAsks || await confirm.ask({
      title: `Revert ${version.kind} to version ${version.version}?`,
      message: `This saves a new ${version.kind} version equal to version ${version.version}; the versions in between stay in the history.`,
      confirm: `Revert to v${version.version}`,
    });
    if (!confirmed) return;
    await reverting.run(async () => {
      const body = version.kind === "targeting" ? { rules: (version.segmentRules ?? version.rules)! } : { variants: version.variants! };
      const outcome = await write({ kind: version.kind, featureKey, body, summary: `Revert ${version.kind} of ${featureKey} to version ${version.version}` });
      if (outcome) onReverted(outcome, (saved) => `Reverted: ${version.kind} version ${saved} equals version ${version.version}.`);
    });
  };
  return (
    <section class="card" aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      {confirm.dialog}
      <ErrorMessage error={error ?? reverting.error} />
      {versions && versions.length === 0 && <p class="empty-inline">No versions saved yet: each save of targeting or config adds one here, with who made it.</p>}
      <ol class="history">
        {list.map((version) => {
          const id = `${version.kind}-${version.version}`;
          const notes = (
            <>
              {version.comment && <blockquote class="review-comment">{version.comment}</blockquote>}
              {version.changeRequestId && (
                <div class="small">
                  Applied by <a href={requestLink(version.changeRequestId)}>a change request</a>
                </div>
              )}
            </>
          );
          if (version.kind === "enabled") {
            return (
              <li>
                <strong>kill switch: switched {version.enabled ? "on" : "off"}</strong> {when(version.at)} by {actorName(version.actor)}
                {notes}
              </li>
            );
          }
          const revertable = version as HistoryVersion & { kind: "targeting" | "config" };
          return (
            <li>
              <div class="row">
                <span>
                  <strong>
                    {version.kind} v{version.version}
                  </strong>{" "}
                  {when(version.at)} by {actorName(version.actor)}
                </span>
                <button type="button" class="link" aria-expanded={open === id} aria-controls={`diff-${id}`} onClick={() => setOpen(open === id ? undefined : id)}>
                  {open === id ? "Hide" : "Show"} diff of {version.kind} v{version.version}
                </button>
                {canWrite && (
                  <button type="button" class="link" disabled={reverting.busy} onClick={() => revert(revertable)}>
                    Revert to {version.kind} v{version.version}
                  </button>
                )}
              </div>
              {notes}
              {open === id && (
                <pre class="diff" id={`diff-${id}`} aria-label={`Changes in ${version.kind} version ${version.version}`}>
                  {diffLines(bodyOf(previousOf(version)), bodyOf(version)).map((line) => (
                    <span class={`diff-${line.kind}`}>
                      {line.kind === "added" ? "+ " : line.kind === "removed" ? "- " : "  "}
                      {line.text}
                      {"\n"}
                    </span>
                  ))}
                </pre>
              )}
            </li>
          );
        })}
      </ol>
    </section>
  );
}
