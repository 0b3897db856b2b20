import { useState } from "preact/hooks";
import { ApiError, type EnvironmentFeature } from "../api";
import { FilterEditor } from "../rules/FilterEditor";
import { filterOfType, localIssues, tidy, type Filter } from "../rules/model";
import { useAction } from "../hooks/useAction";
import type { GovernedEditorProps } from "../hooks/useGovernedWrite";
import { ErrorMessage } from "../ui";

type Variant = { filter: Filter; key: string; payload: unknown };

/** The feature's remote config variants in one environment, saved through the environment's policy (`write`). */
export function RemoteConfig({
  featureKey,
  environmentName,
  initial,
  canWrite,
  approvalRequired,
  asking,
  write,
  onSaved,
}: GovernedEditorProps<EnvironmentFeature["config"]>) {
  const [variants, setVariants] = useState(initial.variants as Variant[]);
  const [payloadText, setPayloadText] = useState(() => initial.variants.map((variant) => JSON.stringify(variant.payload ?? null, null, 2)));
  const [payloadErrors, setPayloadErrors] = useState<(string | undefined)[]>([]);
  const [error, setError] = useState<unknown>();
  const [attempted, setAttempted] = useState(false);
  const action = useAction();
  const saving = { ...action, busy: action.busy && !asking };
  const local = variants.flatMap((variant, index) => [
    ...(variant.key.trim() ? [] : [{ path: `variants.${index}.key`, message: "Give the variant a key." }]),
    ...localIssues(variant.filter, `variants.${index}.filter`),
  ]);
  const issues = error instanceof ApiError ? error.validationErrors : attempted ? local : [];
  const update = (index: number, change: Partial<Variant>) => {
    setVariants(variants.map((variant, at) => (at === index ? { ...variant, ...change } : variant)));
    setError(undefined);
  };
  const onPayload = (index: number, text: string) => {
    setPayloadText(payloadText.map((each, at) => (at === index ? text : each)));
    setError(undefined);
    try {
      update(index, { payload: JSON.parse(text) });
      setPayloadErrors(payloadErrors.map((each, at) => (at === index ? undefined : each)));
    } catch (caught) {
      const next = [...payloadErrors];
      next[index] = (caught as Error).message;
      setPayloadErrors(next);
    }
  };
  const save = async () => {
    if (local.length > 0) return setAttempted(true);
    await saving.run(async () => {
      try {
        const outcome = await write({ kind: "config", featureKey, body: { variants: variants.map((variant) => ({ ...variant, filter: tidy(variant.filter) })) }, summary: `Change remote config of ${featureKey}` });
        if (!outcome) return;
        setError(undefined);
        onSaved(outcome, (version) => `Saved as config version ${version}.`);
      } catch (caught) {
        setError(caught);
      }
    });
  };
  const keyIssue = (index: number) => issues.find((issue) => issue.path === `variants.${index}.key`)?.message;
  return (
    <section class="card" aria-labelledby="config-title">
      <h2 id="config-title">
        Remote config <span class="muted small">version {initial.version}</span>
      </h2>
      <p class="muted">The first variant whose filter matches is served, with its payload.</p>
      {variants.length === 0 && <p class="empty-inline">No variants: SDKs get no config for this feature. Add one to send a payload (a JSON value) to the users it matches.</p>}
      <ol class="rules">
        {variants.map((variant, index) => (
          <li class="rule">
            <div class="row">
              <label>
                Variant key
                <input value={variant.key} disabled={!canWrite} aria-invalid={keyIssue(index) ? true : undefined} onInput={(event) => update(index, { key: (event.currentTarget as HTMLInputElement).value })} />
                {keyIssue(index) && <span class="field-error">{keyIssue(index)}</span>}
              </label>
              {canWrite && (
                <button
                  type="button"
                  class="link danger"
                  onClick={() => (
                    setVariants(variants.filter((_, at) => at !== index)),
                    setPayloadText(payloadText.filter((_, at) => at !== index)),
                    setPayloadErrors(payloadErrors.filter((_, at) => at !== index)),
                    setError(undefined)
                  )}
                >
                  Remove variant {index + 1}
                </button>
              )}
            </div>
            <label class="block">
              Payload (JSON)
              <textarea class="code" rows={4} value={payloadText[index] ?? ""} disabled={!canWrite} aria-invalid={payloadErrors[index] ? true : undefined} onInput={(event) => onPayload(index, (event.currentTarget as HTMLTextAreaElement).value)} />
              {payloadErrors[index] && <span class="field-error">{payloadErrors[index]}</span>}
            </label>
            <FilterEditor
              filter={variant.filter}
              path={`variants.${index}.filter`}
              issues={issues}
              featureKey={featureKey}
              readOnly={!canWrite}
              label={`Variant ${index + 1} filter`}
              allowSegments={false}
              onChange={(filter) => update(index, { filter })}
            />
          </li>
        ))}
      </ol>
      {attempted && local.length > 0 && !error && (
        <p class="error" role="alert">
          Not saved: fix the marked fields.
        </p>
      )}
      <ErrorMessage error={error} issues={false} />
      {canWrite && (
        <div class="actions">
          <button
            type="button"
            class="secondary"
            onClick={() => (setVariants([...variants, { key: `variant-${variants.length + 1}`, payload: null, filter: filterOfType("constant", featureKey) }]), setPayloadText([...payloadText, "null"]))}
          >
            Add variant
          </button>
          <button type="button" onClick={save} disabled={saving.busy || payloadErrors.some(Boolean)}>
            {saving.busy ? "Saving…" : approvalRequired ? "Propose config change" : "Save config"}
          </button>
          {approvalRequired && <span class="muted small">{environmentName} requires approval: saving opens a change request.</span>}
        </div>
      )}
    </section>
  );
}
