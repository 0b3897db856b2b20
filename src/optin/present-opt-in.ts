import type { FeatureRecord } from "../features/records.js";
import type { OptInState } from "./opt-in-store.js";

/**
 * The `optIn` item of an evaluation answer, exactly as the Reflag browser SDK validates it (`parseOptIn` in its
 * `flag/flagCache.ts`): four fields of these types, or the whole answer is rejected. Switchyard features have no
 * display name, so `name` is the feature key.
 */
export interface OptInItem {
  userOptedIn: boolean;
  companyOptedIn: boolean;
  isOptedIn: boolean;
  name: string;
  description: string | null;
}

/** `optIn` for one feature that allows opt-in; pair it with `optInEnabled: true` on the item. */
export function presentOptIn(feature: Pick<FeatureRecord, "key" | "description">, state: OptInState): OptInItem {
  return {
    userOptedIn: state.userOptedIn,
    companyOptedIn: state.companyOptedIn,
    isOptedIn: state.userOptedIn || state.companyOptedIn,
    name: feature.key,
    description: feature.description,
  };
}
