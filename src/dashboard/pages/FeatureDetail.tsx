import { useEffect, useState } from "preact/hooks";
import type { Scope } from "../App";
import { api, ApiError, enc, get, type EnvironmentFeature, type Feature, type HistoryVersion } from "../api";
import { diffLines } from "../diff";
import { FilterEditor } from "../rules/FilterEditor";
import { RulesEditor } from "../rules/RulesEditor";
import { filterOfType, type Filter } from "../rules/model";
import { actorName, ErrorMessage, Page, useLoad, when } from "../ui";
import { TryIt } from "./TryIt";

interface Detail {
  feature: Feature;
  targeting: EnvironmentFeature["targeting"];
  config: EnvironmentFeature["config"];
}

type Variant = { filter: Filter; key: string; payload: unknown };

/** One feature in the selected environment: targeting, try it, remote config, history. */
export function FeatureDetail({ scope, featureKey }: { scope: Scope; featureKey: string }) {
  const { environmentId, canWrite, app } = scope;
  const base = `/admin/environments/${enc(environmentId)}/features/${enc(featureKey)}`;
  const detail = useLoad(() => get<Detail>(base), [base]);
  const history = useLoad(() => get<{ versions: HistoryVersion[] }>(`${base}/history`), [base]);
  const environment = app.environments.find((each) => each.id === environmentId)!;
  // Kept here, not in the sections: a save reloads the feature, and the sections start afresh on the new version.
  const [notice, setNotice] = useState<string | undefined>();
  useEffect(() => setNotice(undefined), [base]);
  const reload = (message?: string) => {
    setNotice(message);
    detail.reload();
    history.reload();
  };

  return (
    <Page title={`Feature ${featureKey}`} actions={<a href="#/">Back to features</a>}>
      <ErrorMessage error={detail.error} />
      {detail.data && (
        <>
          <p class="muted">
            {detail.data.feature.description ?? "No description."} Stage: {detail.data.feature.stage ?? "—"}. Environment: <strong>{environment.name}</strong>.
          </p>
          <div aria-live="polite" class="notice-slot">
            {notice && <p class="success">{notice}</p>}
          </div>
          <Targeting key={`${environmentId}:${detail.data.targeting.version}`} base={base} featureKey={featureKey} initial={detail.data.targeting} canWrite={canWrite} onSaved={reload} />
          <TryIt environmentId={environmentId} featureKey={featureKey} />
          <RemoteConfig key={`${environmentId}:c${detail.data.config.version}`} base={base} featureKey={featureKey} initial={detail.data.config} canWrite={canWrite} onSaved={reload} />
        </>
      )}
      <History base={base} versions={history.data?.versions} error={history.error} canWrite={canWrite} onReverted={reload} />
    </Page>
  );
}

function Targeting({ base, featureKey, initial, canWrite, onSaved }: { base: string; featureKey: string; initial: Detail["targeting"]; canWrite: boolean; onSaved(message: string): void }) {
  const [rules, setRules] = useState(initial.rules as { filter: Filter }[]);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const issues = error instanceof ApiError ? error.validationErrors : [];
  const save = async () => {
    setBusy(true);
    try {
      const answer = await api<{ targeting: { version: number } }>("PUT", `${base}/targeting`, { rules });
      setError(undefined);
      onSaved(`Saved as version ${answer.targeting.version}.`);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card" aria-labelledby="targeting-title">
      <h2 id="targeting-title">
        Targeting <span class="muted small">version {initial.version}</span>
      </h2>
      {!canWrite && <p class="notice">You can view targeting; a viewer cannot change it.</p>}
      <RulesEditor rules={rules} onChange={setRules} issues={issues} featureKey={featureKey} readOnly={!canWrite} />
      {canWrite && (
        <div class="actions">
          <button type="button" onClick={save} disabled={busy}>
            Save targeting
          </button>
        </div>
      )}
      <ErrorMessage error={error} />
    </section>
  );
}

function RemoteConfig({ base, featureKey, initial, canWrite, onSaved }: { base: string; featureKey: string; initial: Detail["config"]; canWrite: boolean; onSaved(message: string): void }) {
  const [variants, setVariants] = useState(initial.variants as Variant[]);
  const [payloadText, setPayloadText] = useState(() => initial.variants.map((variant) => JSON.stringify(variant.payload ?? null, null, 2)));
  const [payloadErrors, setPayloadErrors] = useState<(string | undefined)[]>([]);
  const [error, setError] = useState<unknown>();
  const issues = error instanceof ApiError ? error.validationErrors : [];
  const update = (index: number, change: Partial<Variant>) => setVariants(variants.map((variant, at) => (at === index ? { ...variant, ...change } : variant)));
  const onPayload = (index: number, text: string) => {
    setPayloadText(payloadText.map((each, at) => (at === index ? text : each)));
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
    try {
      const answer = await api<{ config: { version: number } }>("PUT", `${base}/config`, { variants });
      setError(undefined);
      onSaved(`Saved as config version ${answer.config.version}.`);
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <section class="card" aria-labelledby="config-title">
      <h2 id="config-title">
        Remote config <span class="muted small">version {initial.version}</span>
      </h2>
      <p class="muted">The first variant whose filter matches is served, with its payload.</p>
      <ol class="rules">
        {variants.map((variant, index) => (
          <li class="rule">
            <div class="row">
              <label>
                Variant key
                <input value={variant.key} disabled={!canWrite} onInput={(event) => update(index, { key: (event.currentTarget as HTMLInputElement).value })} />
              </label>
              {canWrite && (
                <button
                  type="button"
                  class="link danger"
                  onClick={() => (setVariants(variants.filter((_, at) => at !== index)), setPayloadText(payloadText.filter((_, at) => at !== index)))}
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
              onChange={(filter) => update(index, { filter })}
            />
          </li>
        ))}
      </ol>
      {canWrite && (
        <div class="actions">
          <button
            type="button"
            class="secondary"
            onClick={() => (setVariants([...variants, { key: `variant-${variants.length + 1}`, payload: null, filter: filterOfType("constant", featureKey) }]), setPayloadText([...payloadText, "null"]))}
          >
            Add variant
          </button>
          <button type="button" onClick={save} disabled={payloadErrors.some(Boolean)}>
            Save config
          </button>
        </div>
      )}
      <ErrorMessage error={error} />
    </section>
  );
}

function History({ base, versions, error, canWrite, onReverted }: { base: string; versions: HistoryVersion[] | undefined; error: unknown; canWrite: boolean; onReverted(message: string): void }) {
  const [open, setOpen] = useState<string | undefined>();
  const [revertError, setRevertError] = useState<unknown>();
  const list = versions ? [...versions].sort((a, b) => (a.at === b.at ? b.version - a.version : b.at.localeCompare(a.at))) : [];
  const bodyOf = (version: HistoryVersion | undefined) => (version ? JSON.stringify(version.kind === "targeting" ? version.rules : version.variants, null, 2) : "");
  const previousOf = (version: HistoryVersion) => versions?.find((each) => each.kind === version.kind && each.version === version.version - 1);
  const revert = async (version: HistoryVersion) => {
    if (!confirm(`Revert ${version.kind} to version ${version.version}? This saves a new version equal to it.`)) return;
    try {
      const body = version.kind === "targeting" ? { rules: version.rules } : { variants: version.variants };
      const answer = await api<{ targeting?: { version: number }; config?: { version: number } }>("PUT", `${base}/${version.kind}`, body);
      onReverted(`Reverted: ${version.kind} version ${(answer.targeting ?? answer.config)!.version} equals version ${version.version}.`);
    } catch (caught) {
      setRevertError(caught);
    }
  };
  return (
    <section class="card" aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      <ErrorMessage error={error ?? revertError} />
      {versions && versions.length === 0 && <p class="muted">No versions saved yet.</p>}
      <ol class="history">
        {list.map((version) => {
          const id = `${version.kind}-${version.version}`;
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
                  <button type="button" class="link" onClick={() => revert(version)}>
                    Revert to {version.kind} v{version.version}
                  </button>
                )}
              </div>
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
