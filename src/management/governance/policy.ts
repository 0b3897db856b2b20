/** Each environment's approval policy (API.md §15), stored per environment id; an environment never set has the defaults. */
import type { KvStore } from "../../storage/kv.js";
import type { EnvironmentRecord } from "../../tenancy/tenancy-records.js";
import type { ChangeRequestRecord } from "./change-request-records.js";

export interface EnvironmentPolicy {
  requireApproval: boolean;
  /** 1..5 approvals on the current revision of a change request. */
  minApprovals: number;
  /** Whether a change request's author may approve it. */
  allowSelfApproval: boolean;
  /** The dashboard asks for confirmation and a comment before saving here. */
  confirmChanges: boolean;
}

/** The policy of an environment nobody set one for: no approval; confirmation where it is named production. */
export function defaultPolicy(environment: Pick<EnvironmentRecord, "name">): EnvironmentPolicy {
  return { requireApproval: false, minApprovals: 1, allowSelfApproval: false, confirmChanges: environment.name.toLowerCase() === "production" };
}

export class PolicyRepository {
  constructor(private readonly store: KvStore) {}

  private get policies() {
    return this.store.table("policies");
  }

  policyOf(environment: Pick<EnvironmentRecord, "id" | "name">): EnvironmentPolicy {
    return this.policies.get(environment.id) ?? defaultPolicy(environment);
  }

  /** Inside a write transaction. */
  putPolicy(environmentId: string, policy: EnvironmentPolicy): void {
    this.policies.put(environmentId, policy);
  }
}

declare module "../../storage/kv.js" {
  /** The value types of the tables governance owns (see TableValues). */
  interface TableValues {
    policies: EnvironmentPolicy;
    changeRequests: ChangeRequestRecord;
  }
}
