import type { ComponentChild } from "preact";
import type { App as AppRecord, Member } from "./api";
import { FeatureDetail } from "./pages/FeatureDetail";
import { Features } from "./pages/Features";
import { CompanyDetail, EntityList, UserDetail } from "./pages/Companies";
import { Feedback } from "./pages/Feedback";
import { Keys } from "./pages/Keys";
import { LiveEvents } from "./pages/LiveEvents";
import { Audit, Members } from "./pages/Members";
import { Operations } from "./pages/Operations";
import type { ParsedRoute, ScopedPage } from "./router";
import type { Scope } from "./scope";

/**
 * The pages of one app's environment (`#/apps/<app>/environments/<env>/<page>[/<id>]`): each page's list, and the
 * detail of one item where the page has one (a second segment on a page without one shows the list). Every
 * ScopedPage has a row, or this does not compile.
 */
export const SCOPED_PAGE_VIEWS: Record<ScopedPage, { list(scope: Scope): ComponentChild; detail?(scope: Scope, id: string): ComponentChild }> = {
  features: {
    list: (scope) => <Features scope={scope} />,
    detail: (scope, id) => <FeatureDetail key={`${scope.app.id}:${id}`} scope={scope} featureKey={id} />,
  },
  companies: {
    list: (scope) => <EntityList scope={scope} kind="companies" />,
    detail: (scope, id) => <CompanyDetail scope={scope} companyId={id} />,
  },
  users: {
    list: (scope) => <EntityList scope={scope} kind="users" />,
    detail: (scope, id) => <UserDetail scope={scope} userId={id} />,
  },
  feedback: { list: (scope) => <Feedback scope={scope} /> },
  keys: { list: (scope) => <Keys key={scope.environment.id} scope={scope} /> },
  events: { list: (scope) => <LiveEvents scope={scope} /> },
};

type GlobalPage = Extract<ParsedRoute, { kind: "global" }>["page"];

/** The pages outside any app: who may open each, and what it shows. A global page without a row answers "Owners only". */
export const GLOBAL_PAGE_VIEWS: Partial<Record<GlobalPage, { ownersOnly: boolean; show(apps: AppRecord[], member: Member): ComponentChild }>> = {
  members: { ownersOnly: true, show: (_apps, member) => <Members self={member} /> },
  audit: { ownersOnly: true, show: (apps) => <Audit apps={apps} /> },
  operations: { ownersOnly: false, show: (apps, member) => <Operations apps={apps} member={member} /> },
};
