import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.js";

describe("cluster configuration", () => {
  it("is off without SWITCHYARD_CLUSTER_URL: the single node is configured exactly as before", () => {
    expect(loadConfig({}).cluster).toBeUndefined();
  });

  it("reads the servers, the node id and defaults", () => {
    const cluster = loadConfig({ SWITCHYARD_CLUSTER_URL: "nats://h1:4222,tls://h2:4222", SWITCHYARD_NODE_ID: "node-1" }).cluster;
    expect(cluster).toMatchObject({ servers: ["nats://h1:4222", "tls://h2:4222"], nodeId: "node-1", prefix: "SWITCHYARD", region: undefined, replicas: 3, publishTimeoutMs: 5000, tls: undefined });
    expect(loadConfig({ SWITCHYARD_CLUSTER_URL: "nats://h1:4222", SWITCHYARD_NODE_ID: "a", SWITCHYARD_REGION: "eu" }).cluster?.region).toBe("eu");
    expect(cluster?.servesUnpinned).toBe(false);
  });

  it("lets a node of a region serve the unpinned apps too with SWITCHYARD_REGION_SERVES_UNPINNED", () => {
    const base = { SWITCHYARD_CLUSTER_URL: "nats://h1:4222", SWITCHYARD_NODE_ID: "a", SWITCHYARD_REGION: "eu" };
    expect(loadConfig({ ...base, SWITCHYARD_REGION_SERVES_UNPINNED: "true" }).cluster).toMatchObject({ region: "eu", servesUnpinned: true });
    expect(loadConfig({ ...base, SWITCHYARD_REGION_SERVES_UNPINNED: "false" }).cluster).toMatchObject({ region: "eu", servesUnpinned: false });
  });

  it.each([
    [{ SWITCHYARD_CLUSTER_URL: "http://h1:4222", SWITCHYARD_NODE_ID: "a" }, "SWITCHYARD_CLUSTER_URL"],
    [{ SWITCHYARD_CLUSTER_URL: "nats://h1:4222,", SWITCHYARD_NODE_ID: "a" }, "SWITCHYARD_CLUSTER_URL"],
    [{ SWITCHYARD_CLUSTER_URL: "nats://h1:4222" }, "SWITCHYARD_NODE_ID"],
    [{ SWITCHYARD_NODE_ID: "a" }, "SWITCHYARD_NODE_ID"],
    [{ SWITCHYARD_CLUSTER_URL: "nats://h1:4222", SWITCHYARD_NODE_ID: "a.b" }, "SWITCHYARD_NODE_ID"],
    [{ SWITCHYARD_CLUSTER_URL: "nats://h1:4222", SWITCHYARD_NODE_ID: "a", SWITCHYARD_REGION: "EU" }, "SWITCHYARD_REGION"],
    [{ SWITCHYARD_REGION: "eu" }, "SWITCHYARD_REGION"],
    [{ SWITCHYARD_CLUSTER_URL: "nats://h1:4222", SWITCHYARD_NODE_ID: "a", SWITCHYARD_CLUSTER_REPLICAS: "7" }, "SWITCHYARD_CLUSTER_REPLICAS"],
    [{ SWITCHYARD_CLUSTER_URL: "nats://h1:4222", SWITCHYARD_NODE_ID: "a", SWITCHYARD_CLUSTER_USER: "u" }, "SWITCHYARD_CLUSTER_PASSWORD"],
    [{ SWITCHYARD_CLUSTER_URL: "nats://h1:4222", SWITCHYARD_NODE_ID: "a", SWITCHYARD_CLUSTER_TOKEN: "t", SWITCHYARD_CLUSTER_CREDS: "/c" }, "SWITCHYARD_CLUSTER_CREDS"],
    [{ SWITCHYARD_CLUSTER_URL: "nats://h1:4222", SWITCHYARD_NODE_ID: "a", SWITCHYARD_CLUSTER_TLS_CERT: "/c" }, "SWITCHYARD_CLUSTER_TLS_KEY"],
    [{ SWITCHYARD_CLUSTER_TOKEN: "t" }, "SWITCHYARD_CLUSTER_TOKEN"],
    // Only with a region, only in cluster mode, only true or false.
    [{ SWITCHYARD_CLUSTER_URL: "nats://h1:4222", SWITCHYARD_NODE_ID: "a", SWITCHYARD_REGION_SERVES_UNPINNED: "true" }, "SWITCHYARD_REGION_SERVES_UNPINNED"],
    [{ SWITCHYARD_REGION: "eu", SWITCHYARD_REGION_SERVES_UNPINNED: "true" }, "SWITCHYARD_REGION"],
    [{ SWITCHYARD_REGION_SERVES_UNPINNED: "true" }, "SWITCHYARD_REGION_SERVES_UNPINNED"],
    [{ SWITCHYARD_CLUSTER_URL: "nats://h1:4222", SWITCHYARD_NODE_ID: "a", SWITCHYARD_REGION: "eu", SWITCHYARD_REGION_SERVES_UNPINNED: "yes" }, "SWITCHYARD_REGION_SERVES_UNPINNED"],
  ])("refuses %j naming %s", (environment, variable) => {
    expect(() => loadConfig(environment)).toThrow(ConfigError);
    expect(() => loadConfig(environment)).toThrow(variable);
  });
});
