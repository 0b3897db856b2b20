/**
 * Issue 21: `npx reflag mcp` (the real @reflag/cli 1.0.4) configures Cursor for a project whose Reflag config points
 * at this service's `/api`; the URL it writes is the one an MCP client then connects to, with a member's API token.
 *
 * The CLI bootstraps (`GET /api/bootstrap`, the Reflag management surface of API.md §10) before any command.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV, createMember, createToken, signIn } from "../support/accounts.js";
import { createApp, request } from "../support/http.js";
import { connectMcp } from "../support/mcp.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

const run = promisify(execFile);
const REFLAG_CLI = createRequire(import.meta.url).resolve("@reflag/cli");

describe(`reflag mcp configures an editor for Switchyard (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let project: string;
  let home: string;

  beforeAll(async () => {
    server = await startServer({ env: { ...ACCOUNT_TEST_ENV } });
    project = mkdtempSync(join(tmpdir(), "switchyard-reflag-project-"));
    home = mkdtempSync(join(tmpdir(), "switchyard-reflag-home-"));
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(project, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });

  it("writes <apiUrl>/mcp into .cursor/mcp.json, and an MCP client reaches the service there", async () => {
    const keys = await createApp(server.url, server.adminToken, "Cursor project");
    await createMember(server.url, server.adminToken, "cli@mcp.test", "editor");
    const token = await createToken(server.url, await signIn(server.url, "cli@mcp.test"), "reflag cli");

    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "agent-project", private: true }));
    writeFileSync(join(project, "reflag.config.json"), JSON.stringify({ baseUrl: server.url, apiUrl: `${server.url}/api`, appId: keys.app.id }));
    const { stdout } = await run(process.execPath, [REFLAG_CLI, "mcp", "--editor", "cursor", "--scope", "local"], {
      cwd: project,
      env: { ...process.env, HOME: home, REFLAG_API_KEY: token.secret, NO_COLOR: "1", CI: "1" },
      timeout: 30_000,
    });
    expect(stdout).toContain("Adding new MCP server entry");

    const written = JSON.parse(readFileSync(join(project, ".cursor", "mcp.json"), "utf8"));
    expect(written.mcpServers.Reflag.url).toBe(`${server.url}/api/mcp`);

    // The editor connects where the CLI pointed it, with the member's token as its header.
    const mcp = await connectMcp(written.mcpServers.Reflag.url, { token: token.secret });
    const apps = await mcp.call("list_apps");
    expect(apps.value.apps.map((app: { id: string }) => app.id)).toContain(keys.app.id);
    const created = await mcp.call("create_flag", { appId: keys.app.id, key: "from-cursor" });
    expect(created.isError, created.text).toBe(false);
    await mcp.close();
  }, 60_000);
});
