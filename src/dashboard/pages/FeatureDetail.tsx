import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { Scope } from "../scope";
import { ApiError, enc, get, type EnvironmentFeature, type Feature, type HistoryVersion } from "../api";
import { SegmentsContext } from "../rules/FilterEditor";
import { CopyButton } from "../components/CopyButton";
import { KillSwitch } from "../components/KillSwitch";
import { PendingBanner } from "../components/PendingBanner";
import { TabPanel, Tabs } from "../components/Tabs";
import { listRequests, loadPolicy } from "../governance";
import { useGovernedWrite, type WriteOutcome } from "../hooks/useGovernedWrite";
import { ErrorMessage, Page, useLoad } from "../ui";
import { Adoption } from "./Adoption";
import { RemoteConfig } from "./FeatureConfig";
import { History } from "./FeatureHistory";
import { Targeting } from "./FeatureTargeting";
import { FeatureSettings } from "./FeatureSettings";
import { OtherEnvironments } from "./OtherEnvironments";
import { Prerequisites, type ListedFeature } from "../components/Prerequisites";
import { RolloutLink } from "../components/RolloutLink";
import type { Prerequisite } from "../release";
import { TryIt } from "./TryIt";

interface Detail {
  feature: Feature;
  targeting: EnvironmentFeature["targeting"];
  config: EnvironmentFeature["config"];
  /** The kill switch (docs/API.md §15): false holds the feature off for everyone here, its rules kept. */
  enabled: boolean;
  prerequisites: Prerequisite[];
}

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
  const policy = useLoad(() => loadPolicy(environmentId), [environmentId]);
  const requests = useLoad(() => listRequests(environmentId), [environmentId]);
  // Every feature here, for picking a prerequisite and naming the features that depend on this one.
  const listed = useLoad(() => get<{ features: ListedFeature[] }>(`/admin/environments/${enc(environmentId)}/features`).then((answer) => answer.features), [environmentId]);
  const governed = useGovernedWrite(scope, policy.data);
  // Kept here, not in the sections: a save reloads the feature, and the sections start afresh on the new version.
  const [notice, setNotice] = useState<ComponentChildren>();
  const [tab, setTab] = useState<Tab>("rules");
  // Stepped by each proposal: the editors start again from the rules as saved, since the proposal changed nothing yet.
  const [proposals, setProposals] = useState(0);
  useEffect(() => setNotice(undefined), [base]);
  const reload = (message?: ComponentChildren) => {
    setNotice(message);
    detail.reload();
    history.reload();
    listed.reload();
    requests.reload();
  };
  const segmentNames = new Map((segments.data ?? []).map((segment) => [segment.id, segment.name] as const));
  // A save either wrote a version or proposed a change request, which changes nothing yet: the notice says which.
  const saved = (outcome: WriteOutcome, savedMessage: (version: number) => string) => {
    if (outcome.kind === "saved") return reload(savedMessage(outcome.version));
    setNotice(
      <>
        Proposed as change request <a href={scope.link("change-requests", outcome.request.id)}>{outcome.request.title}</a>: nothing changes until it is approved and applied.
      </>,
    );
    setProposals((count) => count + 1);
    requests.reload();
  };
  const approvalRequired = policy.data?.requireApproval === true;
  const policyAsks = approvalRequired || policy.data?.confirmChanges === true;
  // What the targeting and the config editors share: the feature, the policy and the governed save.
  const editing = { featureKey, environmentName: environment.name, canWrite, approvalRequired, asking: governed.asking, write: governed.write, onSaved: saved };

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
        actions={
          detail.data && (
            <KillSwitch key={`${environmentId}:${detail.data.enabled}`} scope={scope} featureKey={featureKey} enabled={detail.data.enabled} policy={policy.data} showLabel onChanged={(_on, message) => reload(message)} />
          )
        }
      >
        {governed.dialog}
        <ErrorMessage error={detail.error ?? segments.error ?? policy.error ?? requests.error} />
        <div aria-live="polite" class="notice-slot">
          {notice && <p class="success">{notice}</p>}
        </div>
        {detail.data && !detail.data.enabled && (
          <p class="banner switched-off-banner">
            <strong>Off for everyone in {environment.name}.</strong> The kill switch holds {featureKey} off whatever its rules say; the rules below are kept for when it is switched back on.
          </p>
        )}
        {detail.data && detail.data.prerequisites.length > 0 && (
          // The rules below are not the whole story: say so where they are read, not only in the side card.
          <p class="notice small prerequisites-note">
            Besides its rules, {featureKey} is on in {environment.name} only where{" "}
            {detail.data.prerequisites.map((prerequisite, index) => (
              <>
                {index > 0 && " and "}
                <a href={scope.link("features", prerequisite.feature)}>{prerequisite.feature}</a> is {prerequisite.enabled ? "on" : "off"}
              </>
            ))}{" "}
            (its prerequisites).
          </p>
        )}
        <PendingBanner requests={requests.data} featureKey={featureKey} environmentName={environment.name} link={(id) => scope.link("change-requests", id)} />
        {detail.data && (
          <div class="feature-layout">
            <div class="feature-main">
              <Tabs<Tab> tabs={TABS} label="Sections of this feature" selected={tab} onSelect={(next) => setTab(next)} />
              <TabPanel id="rules" selected={tab}>
                <Targeting key={`${environmentId}:${detail.data.targeting.version}:${proposals}`} {...editing} initial={detail.data.targeting} />
                <RemoteConfig key={`${environmentId}:c${detail.data.config.version}:${proposals}`} {...editing} initial={detail.data.config} />
              </TabPanel>
              <TabPanel id="adoption" selected={tab}>
                <Adoption environmentId={environmentId} featureKey={featureKey} />
              </TabPanel>
              <TabPanel id="history" selected={tab}>
                <History
                  featureKey={featureKey}
                  versions={history.data?.versions}
                  error={history.error}
                  canWrite={canWrite}
                  policyAsks={policyAsks}
                  write={governed.write}
                  onReverted={saved}
                  requestLink={(id) => scope.link("change-requests", id)}
                />
              </TabPanel>
            </div>
            <div class="feature-side">
              <OtherEnvironments
                key={`o${detail.data.targeting.version}:${detail.data.config.version}`}
                scope={scope}
                featureKey={featureKey}
                source={detail.data}
                segmentNames={segmentNames}
                onPromoted={(message) => (setNotice(message), requests.reload())}
              />
              <Prerequisites
                key={`p${environmentId}:${JSON.stringify(detail.data.prerequisites)}`}
                scope={scope}
                featureKey={featureKey}
                saved={detail.data.prerequisites}
                features={listed.data}
                policy={policy.data}
                onSaved={reload}
              />
              <RolloutLink scope={scope} featureKey={featureKey} canStart={detail.data.targeting.rules.length > 0} />
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
