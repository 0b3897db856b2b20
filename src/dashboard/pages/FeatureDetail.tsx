import { useEffect, useState } from "preact/hooks";
import type { Scope } from "../scope";
import { api, ApiError, enc, get, type EnvironmentFeature, type Feature, type HistoryVersion } from "../api";
import { diffLines } from "../diff";
import { FilterEditor, SegmentsContext } from "../rules/FilterEditor";
import { RulesEditor } from "../rules/RulesEditor";
import { filterOfType, localIssues, tidy, type Filter } from "../rules/model";
import { CopyButton } from "../components/CopyButton";
import { TabPanel, Tabs } from "../components/Tabs";
import { useConfirm } from "../components/ConfirmDialog";
import { useAction } from "../hooks/useAction";
import { actorName, ErrorMessage, Page, useLoad, when } from "../ui";
import { Adoption } from "./Adoption";
import { FeatureSettings } from "./FeatureSettings";
import { OtherEnvironments } from "./OtherEnvironments";
import { TryIt } from "./TryIt";

interface Detail {
  feature: Feature;
  targeting: EnvironmentFeature["targeting"];
  config: EnvironmentFeature["config"];
}

type Variant = { filter: Filter; key: string; payload: unknown };

/**
 * The feature page's main column is three tabs, so a person scans one at a time instead of a long scroll; the side
 * column (other environments, try it, settings) stays beside them. Panels stay mounted while hidden, so an unsaved
 * rule edit survives a look at the history.
 */
const TABS = [
  ["rules", "Targeting and config"],
  ["adoption", "Adoption"],
  ["history", "History"],
] as const;
type Tab = (typeof TABS)[number][0];

/** One feature in one environment (docs/API.md §9): targeting, remote config, adoption, history, try it, settings. */
export function FeatureDetail({ scope, featureKey }: { scope: Scope; featureKey: string }) {
  const { environmentId, canWrite, app, environment } = scope;
  const base = `/admin/environments/${enc(environmentId)}/features/${enc(featureKey)}`;
  const detail = useLoad(() => get<Detail>(base), [base]);
  const history = useLoad(() => get<{ versions: HistoryVersion[] }>(`${base}/history`), [base]);
  const segments = useLoad(() => get<{ segments: { id: string; name: string }[] }>(`/admin/apps/${enc(app.id)}/segments`).then((answer) => answer.segments), [app.id]);
  // Kept here, not in the sections: a save reloads the feature, and the sections start afresh on the new version.
  const [notice, setNotice] = useState<string | undefined>();
  const [tab, setTab] = useState<Tab>("rules");
  useEffect(() => setNotice(undefined), [base]);
  const reload = (message?: string) => {
    setNotice(message);
    detail.reload();
    history.reload();
  };

  if (detail.error instanceof ApiError && detail.error.status === 404) {
    return (
      <Page title="Feature not found">
        <div class="empty">
          <p>
            {app.name} has no feature <code>{featureKey}</code>: it may have been archived, or the link names another app.
          </p>
          <a href={scope.link("features")}>See the features of {app.name}</a>
        </div>
      </Page>
    );
  }
  const feature = detail.data?.feature;
  const title = feature ? feature.name || feature.key : featureKey;
  return (
    <SegmentsContext.Provider value={segments.data ?? []}>
      <Page
        title={title}
        titleExtra={
          <p class="feature-key">
            <span class="muted">Key</span> <code data-testid="feature-key">{featureKey}</code>
            <CopyButton text={featureKey} label="Copy feature key" class="link" />
            {feature?.stage && <span class="badge badge-stage">{feature.stage}</span>}
            <span class="badge badge-env">{environment.name}</span>
          </p>
        }
        subtitle={feature?.description ?? undefined}
      >
        <ErrorMessage error={detail.error ?? segments.error} />
        <div aria-live="polite" class="notice-slot">
          {notice && <p class="success">{notice}</p>}
        </div>
        {detail.data && (
          <div class="feature-layout">
            <div class="feature-main">
              <Tabs<Tab> tabs={TABS} label="Sections of this feature" selected={tab} onSelect={(next) => setTab(next)} />
              <TabPanel id="rules" selected={tab}>
                <Targeting key={`${environmentId}:${detail.data.targeting.version}`} base={base} featureKey={featureKey} environmentName={environment.name} initial={detail.data.targeting} canWrite={canWrite} onSaved={reload} />
                <RemoteConfig key={`${environmentId}:c${detail.data.config.version}`} base={base} featureKey={featureKey} initial={detail.data.config} canWrite={canWrite} onSaved={reload} />
              </TabPanel>
              <TabPanel id="adoption" selected={tab}>
                <Adoption environmentId={environmentId} featureKey={featureKey} />
              </TabPanel>
              <TabPanel id="history" selected={tab}>
                <History base={base} versions={history.data?.versions} error={history.error} canWrite={canWrite} onReverted={reload} />
              </TabPanel>
            </div>
            <div class="feature-side">
              <OtherEnvironments key={`o${detail.data.targeting.version}`} scope={scope} featureKey={featureKey} onCopied={reload} />
              <TryIt environmentId={environmentId} featureKey={featureKey} />
              <FeatureSettings
                key={`s${detail.data.feature.name}${detail.data.feature.description}${detail.data.feature.stage}${detail.data.feature.optInEnabled}${detail.data.feature.link}`}
                scope={scope}
                feature={detail.data.feature}
                canWrite={canWrite}
                onSaved={reload}
              />
            </div>
          </div>
        )}
      </Page>
    </SegmentsContext.Provider>
  );
}

function Targeting({
  base,
  featureKey,
  environmentName,
  initial,
  canWrite,
  onSaved,
}: {
  base: string;
  featureKey: string;
  environmentName: string;
  initial: Detail["targeting"];
  canWrite: boolean;
  onSaved(message: string): void;
}) {
  // The rules as saved: with segment references, not the inlined tree the service serves.
  const [rules, setRules] = useState((initial.segmentRules ?? initial.rules) as { filter: Filter }[]);
  const [jsonError, setJsonError] = useState<string | undefined>();
  const [attempted, setAttempted] = useState(false);
  const saving = useAction();
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
        const answer = await api<{ targeting: { version: number } }>("PUT", `${base}/targeting`, { rules: rules.map((rule) => ({ ...rule, filter: tidy(rule.filter) })) });
        setServerError(undefined);
        onSaved(`Saved as version ${answer.targeting.version}.`);
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
            {saving.busy ? "Saving…" : "Save targeting"}
          </button>
          {jsonError && <span class="muted small">Fix the JSON to save.</span>}
        </div>
      )}
    </section>
  );
}

function RemoteConfig({ base, featureKey, initial, canWrite, onSaved }: { base: string; featureKey: string; initial: Detail["config"]; canWrite: boolean; onSaved(message: string): void }) {
  const [variants, setVariants] = useState(initial.variants as Variant[]);
  const [payloadText, setPayloadText] = useState(() => initial.variants.map((variant) => JSON.stringify(variant.payload ?? null, null, 2)));
  const [payloadErrors, setPayloadErrors] = useState<(string | undefined)[]>([]);
  const [error, setError] = useState<unknown>();
  const [attempted, setAttempted] = useState(false);
  const saving = useAction();
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
        const answer = await api<{ config: { version: number } }>("PUT", `${base}/config`, { variants: variants.map((variant) => ({ ...variant, filter: tidy(variant.filter) })) });
        setError(undefined);
        onSaved(`Saved as config version ${answer.config.version}.`);
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
            {saving.busy ? "Saving…" : "Save config"}
          </button>
        </div>
      )}
    </section>
  );
}

function History({ base, versions, error, canWrite, onReverted }: { base: string; versions: HistoryVersion[] | undefined; error: unknown; canWrite: boolean; onReverted(message: string): void }) {
  const [open, setOpen] = useState<string | undefined>();
  const reverting = useAction();
  const confirm = useConfirm();
  const list = versions ? [...versions].sort((a, b) => (a.at === b.at ? b.version - a.version : b.at.localeCompare(a.at))) : [];
  const bodyOf = (version: HistoryVersion | undefined) => (version ? JSON.stringify(version.kind === "targeting" ? (version.segmentRules ?? version.rules) : version.variants, null, 2) : "");
  const previousOf = (version: HistoryVersion) => versions?.find((each) => each.kind === version.kind && each.version === version.version - 1);
  const revert = async (version: HistoryVersion) => {
    const confirmed = await confirm.ask({
      title: `Revert ${version.kind} to version ${version.version}?`,
      message: `This saves a new ${version.kind} version equal to version ${version.version}; the versions in between stay in the history.`,
      confirm: `Revert to v${version.version}`,
    });
    if (!confirmed) return;
    await reverting.run(async () => {
      const body = version.kind === "targeting" ? { rules: version.segmentRules ?? version.rules } : { variants: version.variants };
      const answer = await api<{ targeting?: { version: number }; config?: { version: number } }>("PUT", `${base}/${version.kind}`, body);
      onReverted(`Reverted: ${version.kind} version ${(answer.targeting ?? answer.config)!.version} equals version ${version.version}.`);
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
                  <button type="button" class="link" disabled={reverting.busy} onClick={() => revert(version)}>
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
