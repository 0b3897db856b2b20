import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AccountRepository } from "../accounts/account-repository.js";
import { AuditLog } from "../accounts/audit-log.js";
import { ADMIN_ACTOR, type Actor } from "../accounts/principal.js";
import type { MemberRecord, PasswordHash } from "../accounts/account-records.js";
import { FeatureRepository } from "../features/feature-repository.js";
import { TABLES, type KvStore } from "../storage/kv.js";
import { maskKey, newKey, digestKey } from "../tenancy/identifiers.js";
import { planApp, planEnvironment, TenancyRepository } from "../tenancy/tenancy-repository.js";
import { CHANGE_TYPES, type ChangeBodies, type ChangeOf, type ChangeType, type ManagementChange } from "./changes.js";
import { LocalManagementLog } from "./management-log.js";
import { openStore } from "../../test/support/stores.js";
import { derivedId } from "./webhooks/webhook-outbox.js";

const HASH: PasswordHash = { algorithm: "scrypt", cost: 14, blockSize: 8, parallelization: 1, salt: "c2FsdA==", hash: "aGFzaA==" };
const OWNER_ACTOR: Actor = { kind: "member", id: "mem_owner", email: "owner@example.com" };
const TOKEN_ACTOR: Actor = { kind: "token", id: "tok_editor", memberId: "mem_editor", email: "editor@example.com" };

let clock = Date.UTC(2026, 0, 1);
let changeCounter = 0;

/** A change with a fixed envelope: nothing random or clock-dependent enters apply. */
function change<T extends ChangeType>(type: T, body: ChangeBodies[T], actor: Actor = ADMIN_ACTOR): ChangeOf<T> {
  clock += 1000;
  return { id: `chg_${++changeCounter}`, at: new Date(clock).toISOString(), actor, address: "127.0.0.1", type, ...body } as unknown as ChangeOf<T>;
}

function member(id: string, email: string, role: MemberRecord["role"]): MemberRecord {
  return { id, email, name: email.split("@")[0]!, role, createdAt: new Date(clock).toISOString(), lastSignInAt: null, password: HASH };
}

function segment(id: string, name: string, filter: unknown) {
  return { id, name, description: null, filter, createdAt: new Date(clock).toISOString(), updatedAt: new Date(clock).toISOString() };
}

/** A script that uses every kind of change once at least, with ids and digests drawn once up front. */
function script(): ManagementChange[] {
  const planned = planApp("Acme", new Date(clock).toISOString());
  const appId = planned.app.id;
  const production = planned.environments[0]!.record.id;
  const staging = planEnvironment(appId, "staging", new Date(clock).toISOString()).record;
  const rotated = newKey("secret", "production");
  const webhook = (id: string) => ({ id, appId, url: "https://hooks.example.com/x", events: ["*"], environments: [], format: "standard" as const, description: null, enabled: true, createdAt: new Date(clock).toISOString(), createdBy: ADMIN_ACTOR, secret: "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0" });
  const test = change("webhook.test", { appId, webhookId: "wh_1" });
  const tested = derivedId("msg", derivedId("evt", test.id, "0"), "wh_1");
  const attempt = { at: new Date(clock).toISOString(), status: 200, durationMs: 12, error: null, nodeId: "n1" };
  return [
    change("app.create", { app: planned.app, trackingKeyDigest: planned.trackingKeyDigest, environments: planned.environments.map((environment) => environment.record) }),
    change("environment.create", { environment: staging }),
    change("key.rotate", { environmentId: production, kind: "secret", digest: digestKey(rotated), hint: maskKey(rotated) }),
    change("feature.put", { appId, featureKey: "huddle", featureId: "ftHuddle00001", fields: { description: "Huddles", optInEnabled: true } }, TOKEN_ACTOR),
    change("feature.put", { appId, featureKey: "huddle", featureId: "ftUnused00001", fields: { stage: "beta" } }),
    change("rules.put", { environmentId: production, featureKey: "huddle", kind: "targeting", list: [{ filter: { type: "constant", value: true } }] }, OWNER_ACTOR),
    change("rules.put", { environmentId: production, featureKey: "huddle", kind: "config", list: [{ filter: { type: "constant", value: true }, key: "blue", payload: 1 }] }),
    change("analytics.settings", { environmentId: production, settings: { retentionDays: 5 } }),
    change("webhook.create", { webhook: webhook("wh_1") }),
    change("opt-in.set", { environmentId: production, appId, featureKey: "huddle", scope: "user", entityId: "u1", optedIn: true }, { kind: "anonymous", id: "anonymous" }),
    change("analytics.rebuild", { environmentId: production }),
    change("stage.create", { appId, stage: { id: "st_dogfood0001", name: "Dogfood", order: 5, targeting: { [production]: { rules: [{ filter: { type: "constant", value: true } }] } }, createdAt: new Date(clock).toISOString() } }),
    change("feature.stage", { appId, featureKey: "huddle", stageId: "st_beta" }, OWNER_ACTOR),
    change("stage.update", { appId, stageId: "st_beta", fields: { name: "Public beta", targeting: { [production]: { rules: [] } } }, reapply: true }),
    change("stage.delete", { appId, stageId: "st_dogfood0001" }),
    change("survey.put", { environmentId: production, featureKey: "huddle", settings: { question: "How are huddles?", enabled: true, afterUses: 3, afterDays: null, quietPeriodDays: 7 } }),
    change("feature.put", { appId, featureKey: "calls", featureId: "ftCalls000001", fields: {} }),
    change("survey.put", { environmentId: production, featureKey: "calls", settings: { question: "Calls?", enabled: true, afterUses: null, afterDays: 2, quietPeriodDays: 0 } }),
    change("survey.remove", { environmentId: production, featureKey: "calls" }),
    change("segment.create", { appId, segment: segment("sg_pro0000001", "Pro", { type: "context", field: "company.plan", operator: "IS", values: ["pro"] }) }),
    change("segment.create", { appId, segment: segment("sg_big0000001", "Big pro", { type: "group", operator: "and", filters: [{ type: "segment", segmentId: "sg_pro0000001" }, { type: "context", field: "company.seats", operator: "GT", values: ["10"] }] }) }),
    change("rules.put", { environmentId: production, featureKey: "huddle", kind: "targeting", list: [{ filter: { type: "segment", segmentId: "sg_big0000001" } }] }, OWNER_ACTOR),
    change("segment.update", { appId, segmentId: "sg_pro0000001", fields: { filter: { type: "context", field: "company.plan", operator: "ANY_OF", values: ["pro", "enterprise"] } } }),
    change("segment.create", { appId, segment: segment("sg_unused00001", "Unused", { type: "constant", value: true }) }),
    change("segment.delete", { appId, segmentId: "sg_unused00001" }),
    change("flags.import", {
      appId,
      source: "document",
      document: {
        segments: [{ name: "Imported", filter: { type: "segment", segment: "Pro" } }],
        stages: [{ name: "Imported stage", order: 7, targeting: { production: { rules: [] } } }],
        features: [{ key: "imported", fields: { description: "From a file", stage: "Imported stage" }, environments: { production: { rules: [{ filter: { type: "segment", segment: "Imported" } }], variants: [] } } }],
      },
      ids: { features: { imported: "ftImported001" }, segments: { Imported: "sg_imported01" }, stages: { "Imported stage": "st_imported01" } },
    }),
    change("backup.create", { bytes: 4096 }, OWNER_ACTOR),
    change("feature.put", { appId, featureKey: "old", featureId: "ftOld00000001", fields: {} }),
    change("feature.archive", { appId, featureKey: "old" }),
    { ...change("feature.enabled", { environmentId: production, featureKey: "huddle", enabled: false }, OWNER_ACTOR), comment: "incident" },
    change("feature.enabled", { environmentId: production, featureKey: "huddle", enabled: true }),
    { ...change("feature.prerequisites", { environmentId: production, featureKey: "calls", prerequisites: [{ feature: "huddle", enabled: true }] }), comment: "calls need huddles" },
    change("feature.promote", { fromEnvironmentId: production, toEnvironmentId: staging.id, featureKey: "huddle" }, OWNER_ACTOR),
    change("policy.put", { environmentId: production, policy: { requireApproval: true, minApprovals: 1 } }),
    { ...change("rules.put", { environmentId: production, featureKey: "calls", kind: "config", list: [] }), bypass: { reason: "hotfix" } },
    change("change-request.create", { environmentId: production, requestId: "cr_1", title: "Calls", description: null, changes: [{ feature: "calls", targeting: { rules: [{ filter: { type: "constant", value: true } }] } }], scheduledAt: null }, OWNER_ACTOR),
    change("change-request.update", { environmentId: production, requestId: "cr_1", title: "Calls for everyone" }, OWNER_ACTOR),
    change("change-request.review", { environmentId: production, requestId: "cr_1", decision: "approve", comment: "ok", revision: 2 }),
    change("change-request.apply", { environmentId: production, requestId: "cr_1" }),
    change("change-request.create", { environmentId: production, requestId: "cr_2", title: "Later", description: "at a time", changes: [{ feature: "calls", config: { variants: [] } }], scheduledAt: new Date(clock + 2000).toISOString() }),
    change("change-request.review", { environmentId: production, requestId: "cr_2", decision: "approve", comment: null, revision: null }, OWNER_ACTOR),
    change("change-request.fire", { environmentId: production, requestId: "cr_2" }),
    change("change-request.create", { environmentId: production, requestId: "cr_3", title: "Dropped", description: null, changes: [{ feature: "calls", config: { variants: [] } }], scheduledAt: null }),
    change("change-request.cancel", { environmentId: production, requestId: "cr_3" }),
    change("policy.put", { environmentId: production, policy: { requireApproval: false } }),
    change("rollout.start", { environmentId: production, featureKey: "calls", rolloutId: "ro_1", settings: { steps: [10, 50, 100], stepSeconds: 60, minExposures: 100, attribute: "company.id", guards: [{ event: "error", direction: "lower_is_better", maxRelativeChange: 0.1, alpha: 0.05 }], onBreach: "rollback" } }),
    change("rollout.transition", { environmentId: production, rolloutId: "ro_1", action: "advance", expected: { state: "running", step: 0 }, reason: null, evidence: { exposures: { exposed: 120, control: 1000 }, guards: [{ event: "error", estimate: 0.01, interval: [-0.2, 0.3], breached: false }] } }),
    change("rollout.transition", { environmentId: production, rolloutId: "ro_1", action: "rollback", expected: { state: "running", step: 1 }, reason: "Guard breached", evidence: null }),
    change("member.create", { member: member("mem_owner", "owner@example.com", "owner") }),
    change("member.create", { member: member("mem_editor", "editor@example.com", "editor") }, OWNER_ACTOR),
    change("member.update", { memberId: "mem_editor", name: "Ed", role: "viewer", password: HASH }, OWNER_ACTOR),
    change("password-reset.issue", { digest: "d-reset", reset: { id: "rst_1", memberId: "mem_editor", createdAt: new Date(clock).toISOString(), expiresAt: new Date(clock + 86_400_000).toISOString() } }),
    change("password-reset.complete", { digest: "d-reset", password: HASH }, { kind: "member", id: "mem_editor", email: "editor@example.com" }),
    change("token.create", { digest: "d-token", token: { id: "tok_editor", memberId: "mem_editor", name: "ci", readOnly: false, createdAt: new Date(clock).toISOString(), lastUsedAt: null } }, OWNER_ACTOR),
    change("credential.touch", { credential: "token", digest: "d-token" }, TOKEN_ACTOR),
    change("session.create", { digest: "d-session", session: { id: "ses_1", memberId: "mem_owner", createdAt: new Date(clock).toISOString(), lastSeenAt: new Date(clock).toISOString() }, prune: [], replaces: null }, OWNER_ACTOR),
    change("credential.touch", { credential: "session", digest: "d-session" }, OWNER_ACTOR),
    change("sign-in.fail", { email: "owner@example.com", memberId: "mem_owner" }, { kind: "anonymous", id: "anonymous" }),
    change("session.revoke", { digest: "d-session" }, OWNER_ACTOR),
    change("token.revoke", { tokenId: "tok_editor" }, TOKEN_ACTOR),
    change("oauth-client.register", { client: { id: "mcp_1", name: "Cursor", redirectUris: ["http://127.0.0.1:9/cb"], createdAt: new Date(clock).toISOString() } }, { kind: "anonymous", id: "anonymous" }),
    change("oauth-code.issue", {
      digest: "d-code",
      code: { id: "oac_1", clientId: "mcp_1", memberId: "mem_editor", redirectUri: "http://127.0.0.1:9/cb", codeChallenge: "c".repeat(43), createdAt: new Date(clock).toISOString(), expiresAt: new Date(clock + 60_000).toISOString() },
    }, { kind: "member", id: "mem_editor", email: "editor@example.com" }),
    change("oauth-code.redeem", {
      codeDigest: "d-code",
      tokenDigest: "d-oauth-token",
      token: { id: "tok_oauth", memberId: "mem_editor", name: "Cursor (MCP)", readOnly: false, createdAt: new Date(clock).toISOString(), lastUsedAt: null, expiresAt: new Date(clock + 86_400_000).toISOString(), oauthClient: { id: "mcp_1", name: "Cursor" } },
    }, { kind: "member", id: "mem_editor", email: "editor@example.com" }),
    change("admin-token.rotate", { digest: "d-admin", hint: "adm_…abcd" }, OWNER_ACTOR),
    change("admin-token.disable", {}, OWNER_ACTOR),
    change("member.remove", { memberId: "mem_editor" }, OWNER_ACTOR),
    test,
    change("webhook.claim", { appId, webhookId: "wh_1", nodeId: "n1", until: new Date(clock + 60_000).toISOString() }),
    change("webhook.attempt", { appId, webhookId: "wh_1", deliveryId: tested, nodeId: "n1", attempt, outcome: "delivered", nextAttemptAt: null, leaseUntil: new Date(clock + 90_000).toISOString() }),
    change("webhook.redeliver", { appId, webhookId: "wh_1", deliveryId: tested }),
    change("webhook.rotate-secret", { appId, webhookId: "wh_1", secret: "whsec_bmV3c2VjcmV0bmV3c2VjcmV0bmV3c2VjcmV0" }),
    change("webhook.update", { appId, webhookId: "wh_1", fields: { events: ["targeting.changed"], description: "CI" } }),
    change("webhook.create", { webhook: webhook("wh_2") }),
    change("webhook.delete", { appId, webhookId: "wh_2" }),
  ];
}

function dump(store: KvStore): Record<string, unknown> {
  const all: Record<string, unknown> = {};
  for (const name of TABLES) for (const entry of store.table(name).range({})) all[`${name}/${entry.key}`] = entry.value;
  return all;
}

describe("management apply", () => {
  const dirs: string[] = [];
  const stores: KvStore[] = [];
  const open = async (kind: "lmdb" | "log"): Promise<KvStore> => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-apply-"));
    dirs.push(dir);
    const store = await openStore(kind, dir);
    stores.push(store);
    return store;
  };
  beforeEach(() => {
    clock = Date.UTC(2026, 0, 1);
    changeCounter = 0;
  });
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("never lets a change's body overwrite its envelope (id, time, actor, address, type)", () => {
    for (const entry of script()) {
      expect(entry.id, entry.type).toMatch(/^chg_\d+$/);
      expect(Number.isNaN(Date.parse(entry.at)), entry.type).toBe(false);
      expect(typeof entry.actor, entry.type).toBe("object");
      expect(entry.address, entry.type).toBe("127.0.0.1");
      expect(CHANGE_TYPES, entry.type).toContain(entry.type);
    }
  });

  it("is deterministic: the same changes in the same order leave the same data, in either store", async () => {
    const changes = script();
    expect(new Set(changes.map((entry) => entry.type))).toEqual(new Set(CHANGE_TYPES));
    const results: Record<string, unknown>[] = [];
    for (const kind of ["lmdb", "lmdb", "log"] as const) {
      const store = await open(kind);
      const log = new LocalManagementLog(store);
      for (const entry of changes) {
        const outcome = await log.submit(entry);
        expect(outcome.ok, `${entry.type}: ${JSON.stringify(outcome)}`).toBe(true);
      }
      results.push(dump(store));
    }
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
  });

  it("appends one audit entry per change, in the change's transaction, with its actor, time and address", async () => {
    const store = await open("lmdb");
    const log = new LocalManagementLog(store);
    const changes = script();
    const cursors: (string | null)[] = [];
    for (const entry of changes) {
      const outcome = await log.submit(entry);
      if (!outcome.ok) throw new Error(outcome.error.message);
      cursors.push(outcome.auditCursor);
    }
    // Bookkeeping changes (usage stamps, editors registering for OAuth, end users' opt-in choices) write no audit entry.
    const unaudited = new Set(["credential.touch", "oauth-client.register", "opt-in.set", "webhook.claim", "webhook.attempt"]);
    const audited = changes.filter((entry) => !unaudited.has(entry.type));
    const { entries } = new AuditLog(store).page({}, undefined, 1000);
    expect(entries).toHaveLength(audited.length);
    entries.forEach((entry, index) => {
      expect(entry.at).toBe(audited[index]!.at);
      expect(entry.actor).toEqual(audited[index]!.actor);
      expect(entry.address).toBe("127.0.0.1");
    });
    // Bookkeeping: no entry, no cursor.
    changes.forEach((entry, index) => expect(cursors[index] === null).toBe(unaudited.has(entry.type)));
    expect(entries.map((entry) => entry.action)).toContain("feature.create");
    expect(entries.map((entry) => entry.action)).toContain("feature.update");
    // Filters: by entity kind, and by member (their tokens' actions included).
    const byEditor = new AuditLog(store).page({ actor: "mem_editor" }, undefined, 100).entries;
    expect(byEditor.length).toBeGreaterThanOrEqual(2);
    expect(byEditor.every((entry) => entry.actor.id === "mem_editor" || (entry.actor.kind === "token" && entry.actor.memberId === "mem_editor"))).toBe(true);
    const tokens = new AuditLog(store).page({ entity: "token" }, undefined, 100).entries;
    expect(tokens.map((entry) => entry.action)).toEqual(["token.create", "token.revoke", "token.create"]);
    // Paging: after the first entry, limit 2.
    const page = new AuditLog(store).page({}, entries[0]!.cursor, 2);
    expect(page.entries.map((entry) => entry.cursor)).toEqual([entries[1]!.cursor, entries[2]!.cursor]);
    expect(page.next).toBe(entries[2]!.cursor);
  });

  it("links each targeting and config version to the audit entry that made it", async () => {
    const store = await open("lmdb");
    const log = new LocalManagementLog(store);
    const changes = script().slice(0, 7);
    for (const entry of changes) await log.submit(entry);
    const production = (changes[0] as ChangeOf<"app.create">).app.defaultEnvironmentId;
    const history = new FeatureRepository(store).listHistory(production, "huddle");
    expect(history.map((entry) => `${entry.kind}@${entry.version}`)).toEqual(["config@1", "targeting@1"]);
    const audit = new AuditLog(store);
    const targeting = history.find((entry) => entry.kind === "targeting")!;
    expect(targeting.actor).toEqual(OWNER_ACTOR);
    expect(audit.get(targeting.auditCursor!)).toMatchObject({ action: "targeting.update", actor: OWNER_ACTOR, entity: { kind: "targeting", key: "huddle", environmentId: production } });
  });

  it("refuses a change that no longer fits the store and writes nothing, not even an audit entry", async () => {
    const store = await open("lmdb");
    const log = new LocalManagementLog(store);
    await log.submit(change("member.create", { member: member("mem_owner", "owner@example.com", "owner") }));
    const before = dump(store);
    const refusals: [ManagementChange, string][] = [
      [change("member.update", { memberId: "mem_owner", role: "editor" }), "CONFLICT"],
      [change("member.remove", { memberId: "mem_owner" }), "CONFLICT"],
      [change("member.create", { member: member("mem_other", "owner@example.com", "viewer") }), "CONFLICT"],
      [change("member.remove", { memberId: "mem_nobody" }), "NOT_FOUND"],
      [change("feature.put", { appId: "app_missing", featureKey: "f", featureId: "ft1", fields: {} }), "NOT_FOUND"],
      [change("rules.put", { environmentId: "env_missing", featureKey: "f", kind: "targeting", list: [] }), "NOT_FOUND"],
      [change("password-reset.complete", { digest: "unknown", password: HASH }), "INVALID_CREDENTIALS"],
      [change("token.revoke", { tokenId: "tok_missing" }), "NOT_FOUND"],
    ];
    for (const [entry, code] of refusals) {
      const outcome = await log.submit(entry);
      expect(outcome.ok ? "ok" : outcome.error.code, entry.type).toBe(code);
    }
    expect(dump(store)).toEqual(before);
  });

  it("ends a member's sessions, tokens and reset links with the member, and sessions with a new password", async () => {
    const store = await open("lmdb");
    const log = new LocalManagementLog(store);
    const accounts = new AccountRepository(store);
    await log.submit(change("member.create", { member: member("mem_owner", "owner@example.com", "owner") }));
    await log.submit(change("member.create", { member: member("mem_b", "b@example.com", "editor") }));
    const at = new Date(clock).toISOString();
    await log.submit(change("session.create", { digest: "s1", session: { id: "ses_1", memberId: "mem_b", createdAt: at, lastSeenAt: at }, prune: [], replaces: null }));
    await log.submit(change("session.create", { digest: "s2", session: { id: "ses_2", memberId: "mem_b", createdAt: at, lastSeenAt: at }, prune: ["s1"], replaces: null }));
    expect(accounts.session("s1")).toBeUndefined();
    await log.submit(change("member.update", { memberId: "mem_b", password: HASH }));
    expect(accounts.session("s2")).toBeUndefined();
    await log.submit(change("token.create", { digest: "t1", token: { id: "tok_1", memberId: "mem_b", name: "x", readOnly: true, createdAt: at, lastUsedAt: null } }));
    await log.submit(change("password-reset.issue", { digest: "r1", reset: { id: "rst_1", memberId: "mem_b", createdAt: at, expiresAt: at } }));
    // An expired reset link is refused at apply time, by the change's own clock.
    const late = await log.submit(change("password-reset.complete", { digest: "r1", password: HASH }));
    expect(late.ok).toBe(false);
    await log.submit(change("member.remove", { memberId: "mem_b" }));
    expect(accounts.token("t1")).toBeUndefined();
    expect(accounts.tokenById("tok_1")).toBeUndefined();
    expect(accounts.reset("r1")).toBeUndefined();
    expect(accounts.memberByEmail("b@example.com")).toBeUndefined();
  });

  it("tells observers what changed: flag-state versions and revoked key digests", async () => {
    const store = await open("lmdb");
    const log = new LocalManagementLog(store);
    const seen: string[] = [];
    log.onApplied((applied, outcome) => seen.push(`${applied.type} ${JSON.stringify(outcome.effects)}`));
    const changes = script().slice(0, 4);
    for (const entry of changes) await log.submit(entry);
    const production = (changes[0] as ChangeOf<"app.create">).app.defaultEnvironmentId;
    const tenancy = new TenancyRepository(store);
    const revoked = (changes[0] as ChangeOf<"app.create">).environments[0]!.secretKeyDigest;
    expect(seen[2]).toBe(`key.rotate ${JSON.stringify({ flagStates: [], keys: { revokedDigests: [revoked] } })}`);
    expect(seen[3]).toContain(`["${production}",${tenancy.getEnvironment(production)!.flagStateVersion}]`);
    // A refused change is not announced.
    await log.submit(change("feature.archive", { appId: "app_missing", featureKey: "x" }));
    expect(seen).toHaveLength(4);
  });
});
