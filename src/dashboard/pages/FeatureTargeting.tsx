import { useState } from "preact/hooks";
import { ApiError, type EnvironmentFeature } from "../api";
import { RulesEditor } from "../rules/RulesEditor";
import { localIssues, tidy, type Filter } from "../rules/model";
import { useAction } from "../hooks/useAction";
import type { GovernedEditorProps } from "../hooks/useGovernedWrite";
import { ErrorMessage } from "../ui";

/** The feature's targeting in one environment: the rule editor, saved through the environment's policy (`write`). */
export function Targeting({
  featureKey,
  environmentName,
  initial,
  canWrite,
  approvalRequired,
  asking,
  write,
  onSaved,
}: GovernedEditorProps<EnvironmentFeature["targeting"]>) {
  // The rules as saved: with segment references, not the inlined tree the service serves.
  const [rules, setRules] = useState((initial.segmentRules ?? initial.rules) as { filter: Filter }[]);
  const [jsonError, setJsonError] = useState<string | undefined>();
  const [attempted, setAttempted] = useState(false);
  const action = useAction();
  const saving = { ...action, busy: action.busy && !asking };
  const [serverError, setServerError] = useState<unknown>();
  const local = rules.flatMap((rule, index) => localIssues(rule.filter, `rules.${index}.filter`));
  // A server message belongs to the rules it was about: any edit clears it, so nothing stale stays on screen.
  const issues = serverError instanceof ApiError ? serverError.validationErrors : attempted ? local : [];
  const edit = (next: { filter: Filter }[]) => {
    setRules(next);
    setServerError(undefined);
  };
  const save = async () => {
    if (jsonError) return;
    if (local.length > 0) {
      setAttempted(true);
      setServerError(undefined);
      return;
    }
    await saving.run(async () => {
      try {
        const outcome = await write({ kind: "targeting", featureKey, body: { rules: rules.map((rule) => ({ ...rule, filter: tidy(rule.filter) })) }, summary: `Change targeting of ${featureKey}` });
        if (!outcome) return;
        setServerError(undefined);
        onSaved(outcome, (version) => `Saved as version ${version}.`);
      } catch (caught) {
        setServerError(caught);
      }
    });
  };
  return (
    <section class="card" aria-labelledby="targeting-title">
      <h2 id="targeting-title">
        Targeting in {environmentName} <span class="muted small">version {initial.version}</span>
      </h2>
      {!canWrite && <p class="notice">You can view targeting; a viewer cannot change it.</p>}
      <RulesEditor
        rules={rules}
        onChange={edit}
        onJsonError={(message) => (setJsonError(message), setServerError(undefined))}
        issues={issues}
        featureKey={featureKey}
        readOnly={!canWrite}
      />
      {attempted && local.length > 0 && !serverError && (
        <p class="error" role="alert">
          Not saved: {local.length === 1 ? "one condition needs" : `${local.length} conditions need`} fixing, marked above.
        </p>
      )}
      <ErrorMessage error={serverError} issues={false} />
      {canWrite && (
        <div class="actions">
          <button type="button" onClick={save} disabled={saving.busy || jsonError !== undefined} aria-describedby={jsonError ? "rules-json-error" : undefined}>
            {saving.busy ? "Saving…" : approvalRequired ? "Propose targeting change" : "Save targeting"}
          </button>
          {approvalRequired && <span class="muted small">{environmentName} requires approval: saving opens a change request, nothing changes until it is applied.</span>}
          {jsonError && <span class="muted small">Fix the JSON to save.</span>}
        </div>
      )}
    </section>
  );
}
