import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { App as AppRecord, Environment, Member } from "./api";
import type { ScopedPage } from "./router";

/** Keys the API shows in full only in the answer that made them: kept in memory until their keys page is left. */
export interface FreshKeys {
  secretKey?: string;
  publishableKey?: string;
  trackingKey?: string;
  /** What made them: the page says so ("Production of Acme is ready"). */
  made: "app" | "environment" | "rotation";
}

export interface Scope {
  apps: AppRecord[];
  app: AppRecord;
  environment: Environment;
  environmentId: string;
  member: Member;
  canWrite: boolean;
  reloadApps(): void;
  /** The `#…` link of a page of this app and environment. */
  link(page: ScopedPage, id?: string): string;
  fresh: Record<string, FreshKeys>;
  setFresh(environmentId: string, keys: FreshKeys | undefined): void;
}

/** The current scope for components deep in a page (entity links). */
export const ScopeContext = createContext<Scope | undefined>(undefined);
export const useScope = () => useContext(ScopeContext);

