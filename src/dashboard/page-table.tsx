import type { ComponentChild } from "preact";
import type { App as AppRecord, Member } from "./api";
import { ChangeRequestDetail } from "./pages/ChangeRequestDetail";
import { ChangeRequests } from "./pages/ChangeRequests";
import { EnvironmentSettings } from "./pages/EnvironmentSettings";
import { FeatureDetail } from "./pages/FeatureDetail";
import { Features } from "./pages/Features";
import { CompanyDetail, EntityList, UserDetail } from "./pages/Companies";
import { Feedback } from "./pages/Feedback";
import { Keys } from "./pages/Keys";
import { LiveEvents } from "./pages/LiveEvents";
import { Audit, Members } from "./pages/Members";
import { Operations } from "./pages/Operations";
import { RolloutDetail, Rollouts } from "./pages/Rollouts";
import { Segments } from "./pages/Segments";
import { Stages } from "./pages/Stages";
import { Surveys } from "./pages/Surveys";
import { WebhookDetail } from "./pages/WebhookDetail";
import { Webhooks } from "./pages/Webhooks";
import type { ParsedRoute, ScopedPage } from "./router";
import type { Scope } from "./scope";

/**
 * The pages of one app's environment (`#/apps/<app>/environments/<env>/<page>[/<id>]`): each page's list, and the
 * detail of one item where the page has one (a second segment on a page without one shows the list), and its name
 * in the navigation and the breadcrumb. Every ScopedPage has a row, or this does not compile.
 */
export const SCOPED_PAGE_VIEWS: Record<ScopedPage, { label: string; list(scope: Scope): ComponentChild; detail?(scope: Scope, id: string): ComponentChild }> = {
  features: {
    label: "Features",
    list: (scope) => <Features scope={scope} />,
    detail: (scope, id) => <FeatureDetail key={`${scope.app.id}:${id}`} scope={scope} featureKey={id} />,
  },
  "change-requests": {
    label: "Change requests",
    list: (scope) => <ChangeRequests key={scope.environmentId} scope={scope} />,
    detail: (scope, id) => <ChangeRequestDetail key={`${scope.environmentId}:${id}`} scope={scope} requestId={id} />,
  },
  companies: {
    label: "Companies",
    list: (scope) => <EntityList scope={scope} kind="companies" />,
    detail: (scope, id) => <CompanyDetail scope={scope} companyId={id} />,
  },
  users: {
    label: "Users",
    list: (scope) => <EntityList scope={scope} kind="users" />,
    detail: (scope, id) => <UserDetail scope={scope} userId={id} />,
  },
  feedback: { label: "Feedback", list: (scope) => <Feedback scope={scope} /> },
  surveys: { label: "Surveys", list: (scope) => <Surveys key={scope.environmentId} scope={scope} /> },
  segments: {
    label: "Segments",
    list: (scope) => <Segments key={scope.app.id} scope={scope} />,
    detail: (scope, id) => <Segments key={scope.app.id} scope={scope} segmentId={id} />,
  },
  stages: { label: "Release stages", list: (scope) => <Stages key={scope.app.id} scope={scope} /> },
  rollouts: {
    label: "Rollouts",
    list: (scope) => <Rollouts scope={scope} />,
    detail: (scope, id) => <RolloutDetail key={`${scope.environmentId}:${id}`} scope={scope} featureKey={id} />,
  },
  keys: { label: "Keys & SDKs", list: (scope) => <Keys key={scope.environment.id} scope={scope} /> },
  settings: { label: "Environment settings", list: (scope) => <EnvironmentSettings key={scope.environmentId} scope={scope} /> },
  events: { label: "Live events", list: (scope) => <LiveEvents scope={scope} /> },
  webhooks: {
    label: "Webhooks",
    list: (scope) => <Webhooks key={scope.app.id} scope={scope} />,
    detail: (scope, id) => <WebhookDetail key={`${scope.app.id}:${id}`} scope={scope} webhookId={id} />,
  },
};

/** The side navigation: every environment page, in the table's order. */
export const SCOPED_NAV = Object.entries(SCOPED_PAGE_VIEWS).map(([page, view]) => [page as ScopedPage, view.label] as const);

type GlobalPage = Extract<ParsedRoute, { kind: "global" }>["page"];

/** The pages outside any app: who may open each, and what it shows. A global page without a row answers "Owners only". */
export const GLOBAL_PAGE_VIEWS: Partial<Record<GlobalPage, { ownersOnly: boolean; show(apps: AppRecord[], member: Member): ComponentChild }>> = {
  members: { ownersOnly: true, show: (_apps, member) => <Members self={member} /> },
  audit: { ownersOnly: true, show: (apps) => <Audit apps={apps} /> },
  operations: { ownersOnly: false, show: (apps, member) => <Operations apps={apps} member={member} /> },
};
