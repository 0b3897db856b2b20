/**
 * The CLI's members, tokens, audit, password-reset and admin-token commands against a real service (either twin),
 * from the first owner created with the bootstrap admin token of the data dir to the offline admin-token reset.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV, signIn, signInReply } from "../support/accounts.js";
import { request } from "../support/http.js";
import { runNode, type CliRun } from "../support/run-node.js";
import { CLI, makeDataDir, NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

/** Runs the CLI with `input` on stdin (how scripts hand it a password). */
function cli(args: string[], env: Record<string, string>, input = ""): Promise<CliRun> {
  return runNode([CLI, ...args], { env: { PATH: process.env.PATH ?? "", ...env }, input });
}

const json = (run: CliRun): Record<string, any> => {
  if (run.code !== 0) throw new Error(`CLI failed (${run.code}): ${run.stderr}`);
  return JSON.parse(run.stdout) as Record<string, any>;
};

describe(`CLI: members, tokens, audit, admin token (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  const dataDir = makeDataDir();
  let server: TestServer;
  let env: Record<string, string>;
  const tokenFile = join(dataDir, "admin-token");
  /** Secrets the service must never print (the bootstrap token is printed once on purpose and is not here). */
  const secrets = new Set<string>(["owner passphrase 1", "viewer passphrase 1", "a new viewer passphrase"]);
  const outputs: string[] = [];

  const start = async () => {
    // No SWITCHYARD_ADMIN_TOKEN: the service generates the bootstrap token into the data dir, as on a first start.
    server = await startServer({ dataDir, env: { ...ACCOUNT_TEST_ENV, SWITCHYARD_ADMIN_TOKEN: "" } });
    env = { SWITCHYARD_PORT: String(server.port), SWITCHYARD_DATA_DIR: dataDir, SWITCHYARD_NATIVE: NATIVE_MODE };
  };
  beforeAll(start);
  afterAll(async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("creates the first owner with the data dir's admin token, and manages members", async () => {
    expect(server.output.join("\n")).toContain("Generated admin token");
    const owner = json(await cli(["members", "add", "owner@cli.test", "--role", "owner", "--name", "Olive"], env, "owner passphrase 1\n"));
    expect(owner.member).toMatchObject({ email: "owner@cli.test", name: "Olive", role: "owner" });
    json(await cli(["members", "add", "viewer@cli.test", "--role", "viewer"], env, "viewer passphrase 1\n"));
    const short = await cli(["members", "add", "weak@cli.test", "--role", "viewer"], env, "short\n");
    expect(short.code).toBe(1);
    expect(short.stderr).toContain("password");
    const listed = json(await cli(["members", "list"], env));
    expect(listed.members.map((member: { email: string }) => member.email).sort()).toEqual(["owner@cli.test", "viewer@cli.test"]);
    const updated = json(await cli(["members", "update", "viewer@cli.test", "--role", "editor"], env));
    expect(updated.member.role).toBe("editor");
  });

  it("creates a member's token by signing in as them, then works with it", async () => {
    const created = json(await cli(["tokens", "create", "laptop", "--email", "owner@cli.test"], { SWITCHYARD_PORT: env.SWITCHYARD_PORT! }, "owner passphrase 1\n"));
    expect(created.secret).toMatch(/^sya_/);
    secrets.add(created.secret);
    const asOwner = { ...env, SWITCHYARD_TOKEN: created.secret };
    expect(json(await cli(["apps", "create", "From the CLI"], asOwner)).app.name).toBe("From the CLI");
    const tokens = json(await cli(["tokens", "list"], asOwner));
    expect(tokens.tokens.map((token: { name: string }) => token.name)).toEqual(["laptop"]);
    expect(JSON.stringify(tokens)).not.toContain(created.secret);
    // The admin token belongs to no member: it cannot create a personal token.
    const refused = await cli(["tokens", "create", "nobody"], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("403");
    const audit = json(await cli(["audit", "--entity", "app"], env));
    expect(audit.entries).toHaveLength(1);
    expect(audit.entries[0].actor).toMatchObject({ kind: "token", id: created.token.id });
    const read = json(await cli(["tokens", "create", "read", "--read-only", "--email", "owner@cli.test"], { SWITCHYARD_PORT: env.SWITCHYARD_PORT! }, "owner passphrase 1\n"));
    secrets.add(read.secret);
    expect(json(await cli(["tokens", "revoke", read.token.id], asOwner)).token.id).toBe(read.token.id);
    env.SWITCHYARD_TOKEN = created.secret;
  });

  it("prints a one-time reset link that sets a new password, once", async () => {
    const issued = json(await cli(["members", "reset-password", "viewer@cli.test"], env));
    expect(issued.reset.link).toContain("/dashboard/#/reset-password?token=syr_");
    secrets.add(issued.reset.token);
    json(await cli(["password-reset", issued.reset.token], { SWITCHYARD_PORT: env.SWITCHYARD_PORT! }, "a new viewer passphrase\n"));
    expect((await signInReply(server.url, "viewer@cli.test", "viewer passphrase 1")).status).toBe(401);
    secrets.add((await signIn(server.url, "viewer@cli.test", "a new viewer passphrase")).cookie);
    const again = await cli(["password-reset", issued.reset.token], { SWITCHYARD_PORT: env.SWITCHYARD_PORT! }, "a new viewer passphrase\n");
    expect(again.code).toBe(1);
    expect(json(await cli(["members", "remove", "viewer@cli.test"], env)).member.email).toBe("viewer@cli.test");
  });

  it("rotates the admin token (rewriting the data dir's file) and turns it off", async () => {
    const before = readFileSync(tokenFile, "utf8").trim();
    const withAdmin = { ...env, SWITCHYARD_TOKEN: "" };
    expect(json(await cli(["admin-token", "status"], withAdmin)).adminToken).toMatchObject({ enabled: true, rotated: false });
    const rotated = json(await cli(["admin-token", "rotate"], withAdmin));
    secrets.add(rotated.token);
    expect(rotated.token).toMatch(/^adm_[A-Za-z0-9]{40}$/);
    expect(readFileSync(tokenFile, "utf8").trim()).toBe(rotated.token);
    expect((await request(server.url, "GET", "/admin/apps", { token: before })).status).toBe(401);
    expect((await request(server.url, "GET", "/admin/apps", { token: rotated.token })).status).toBe(200);
    // The CLI on this machine follows the file.
    expect(json(await cli(["apps", "list"], withAdmin)).apps.length).toBe(1);
    json(await cli(["admin-token", "disable"], env));
    expect(existsSync(tokenFile)).toBe(false);
    expect((await request(server.url, "GET", "/admin/apps", { token: rotated.token })).status).toBe(401);
    expect(json(await cli(["admin-token", "status"], env)).adminToken).toMatchObject({ enabled: false, rotated: true });
  });

  it("resets the admin token offline, on the data dir, and the service honours it after a restart", async () => {
    outputs.push(...server.output);
    expect(await server.stop()).toBe(0);
    const reset = json(await cli(["admin-token", "reset"], { SWITCHYARD_DATA_DIR: dataDir, SWITCHYARD_NATIVE: NATIVE_MODE }));
    secrets.add(reset.token);
    await start();
    expect(server.output.join("\n")).not.toContain("Generated admin token");
    expect((await request(server.url, "GET", "/admin/apps", { token: reset.token })).status).toBe(200);
    const audit = await request(server.url, "GET", "/admin/audit?entity=admin-token&order=oldest", { token: reset.token });
    expect(audit.body.entries.map((entry: { action: string; address: string | null }) => `${entry.action}@${entry.address}`)).toEqual([
      expect.stringMatching(/^admin-token\.rotate@/),
      expect.stringMatching(/^admin-token\.disable@/),
      "admin-token.rotate@null",
    ]);
  });

  it("never printed a password, token or reset token", async () => {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const output = [...outputs, ...server.output].join("\n");
    expect([...secrets].filter((secret) => output.includes(secret))).toEqual([]);
  });
});
