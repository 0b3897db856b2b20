/**
 * `npm run bench -- --peers`: the answer comparison that guards the timing, the goals and their bounds, the one-line
 * skip when Unleash cannot be had, and (where PostgreSQL is here) a real smoke run against Unleash 6.4.1 and the
 * Unleash Proxy 1.4.19. No timing is judged: smoke figures mean nothing.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compareAnswers, type EnabledFlags, type SampledAnswers } from "../../bench/peers/agreement.js";
import { PEER_FEATURES, peerContexts, peerFeatureKey } from "../../bench/peers/flag-set.js";
import { peerGoals, type PeerFigure, type PeersSection } from "../../bench/peers/model.js";
import { prepareUnleash } from "../../bench/support/unleash.js";
import { prepareUnleashProxy } from "../../bench/support/unleash-proxy.js";
import { runNode } from "../support/run-node.js";

const RUNNER = resolve(import.meta.dirname, "../../dist/bench/run.js");
const outDirs: string[] = [];
afterAll(() => {
  for (const dir of outDirs) rmSync(dir, { recursive: true, force: true });
});

/** Contexts whose three answers enable flags by a simple rule, identical unless a test changes one. */
function agreeingSamples(count: number): SampledAnswers[] {
  return peerContexts(count).map((context, index) => {
    const flags: EnabledFlags = new Map();
    for (let flag = 0; flag < PEER_FEATURES; flag++) if ((flag + index) % 3 === 0) flags.set(peerFeatureKey(flag), flag % 2 === 0 ? "dark" : undefined);
    return { context, switchyard: new Map(flags), unleash: new Map(flags), proxy: new Map(flags) };
  });
}

describe("the answer comparison before timing", () => {
  it("passes identical answers and counts what it compared", () => {
    const report = compareAnswers(agreeingSamples(30), new Set());
    expect(report.disagreements).toEqual([]);
    expect(report.exactComparisons).toBe(30 * PEER_FEATURES * 2);
    expect(report.enabledPerContext.unleash).toBeGreaterThan(0);
  });

  it("names a flag Switchyard serves where Unleash does not, a variant given on one side only, and the proxy differing", () => {
    const flipped = agreeingSamples(30);
    flipped[4]!.switchyard.set(peerFeatureKey(1), undefined);
    flipped[6]!.unleash.set(peerFeatureKey(0), undefined);
    flipped[6]!.proxy.set(peerFeatureKey(0), undefined);
    flipped[9]!.proxy.delete([...flipped[9]!.proxy.keys()][0]!);
    const report = compareAnswers(flipped, new Set());
    expect(report.disagreements).toHaveLength(3);
    expect(report.disagreements.join("\n")).toMatch(/peer-feature-1 for .*: Switchyard on, Unleash off/);
    expect(report.disagreements.join("\n")).toMatch(/peer-feature-0 for .*: variant dark here, none in Unleash/);
    expect(report.disagreements.join("\n")).toMatch(/the proxy off/);
  });

  it("compares a rehashed flag by its share: other users at the same share pass, another share does not", () => {
    const key = peerFeatureKey(7);
    const sameShare = agreeingSamples(400);
    sameShare.forEach((sample, index) => {
      sample.unleash.delete(key);
      sample.proxy.delete(key);
      sample.switchyard.delete(key);
      if (index % 2 === 0) {
        sample.unleash.set(key, undefined);
        sample.proxy.set(key, undefined);
      } else {
        sample.switchyard.set(key, undefined);
      }
    });
    expect(compareAnswers(sameShare, new Set([key])).disagreements).toEqual([]);
    expect(compareAnswers(sameShare, new Set()).disagreements.length).toBeGreaterThan(0);
    const otherShare = sameShare.map((sample) => ({ ...sample, switchyard: new Map([...sample.switchyard].filter(([name]) => name !== key)) }));
    expect(compareAnswers(otherShare, new Set([key])).disagreements.join("\n")).toMatch(/peer-feature-7: enabled for 0\.0 % of the sample here, 50\.0 % in Unleash/);
  });

  it("refuses a sample where Unleash enabled nothing", () => {
    const empty = peerContexts(10).map((context) => ({ context, switchyard: new Map(), unleash: new Map(), proxy: new Map() }));
    expect(compareAnswers(empty, new Set()).disagreements.join("\n")).toMatch(/prove nothing/);
  });
});

describe("the goals", () => {
  const figure = (peer: PeerFigure["peer"], rps: number, p99Ms: number, cpu: number): PeerFigure => ({
    peer,
    label: peer,
    runs: 2,
    rps,
    p50Ms: p99Ms / 4,
    p99Ms,
    serverCpuUsPerRequest: cpu,
    spread: { min: rps, max: rps, percent: 0 },
    errors: 0,
  });

  it("passes at 40× Unleash and 20× the proxy with a lower p99, and says what bounds a missed ratio", () => {
    const met = peerGoals([figure("switchyard", 40_000, 5, 20), figure("unleash", 1_000, 100, 1_000), figure("proxy", 2_000, 50, 500)]);
    expect(met.map((goal) => goal.verdict)).toEqual(["PASS", "PASS", "PASS", "PASS"]);
    const missed = peerGoals([figure("switchyard", 20_000, 60, 20), figure("unleash", 1_000, 100, 1_000), figure("proxy", 2_000, 50, 300)], 30_000);
    expect(missed.map((goal) => goal.verdict)).toEqual(["MISS", "PASS", "MISS", "MISS"]);
    expect(missed[0]!.bound).toMatch(/50\.0×: the work per request clears the goal/);
    expect(missed[0]!.bound).toMatch(/needs 40,000 req\/s here; an empty uWebSockets\.js server answered 30,000 req\/s .*no server could reach it/);
    expect(missed[2]!.bound).toMatch(/15\.0×: the work per request alone falls short/);
  });
});

describe("npm run bench -- --peers", () => {
  it("says in one line that the peers are skipped when unleash-server cannot be installed, and exits 0", async () => {
    const outDir = mkdtempSync(join(tmpdir(), "switchyard-bench-peers-"));
    outDirs.push(outDir);
    // A cache dir under a regular file cannot be made: the install fails at once (where PostgreSQL is missing, that is the reason).
    writeFileSync(join(outDir, "a-file"), "");
    const run = await runNode([RUNNER, "--peers", "--smoke", "--out", outDir], { env: { ...(process.env as Record<string, string>), SWITCHYARD_UNLEASH_DIR: join(outDir, "a-file", "unleash") } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr.match(/peers skipped: /g)).toHaveLength(1);
    expect(run.stdout).toMatch(/_Peers skipped: (PostgreSQL|npm could not install unleash-server)/);
    const json = readdirSync(outDir).find((file) => file.endsWith("-peers.json"))!;
    const { peers } = JSON.parse(readFileSync(join(outDir, json), "utf8")) as { peers: PeersSection };
    expect(peers.skipped).toBeTruthy();
    expect(peers.runs).toEqual([]);
  }, 60_000);

  const unleash = prepareUnleash();
  const proxy = unleash.ok ? prepareUnleashProxy() : unleash;
  const reason = unleash.ok ? (proxy.ok ? undefined : proxy.reason) : unleash.reason;
  it.skipIf(reason !== undefined)(`measures Switchyard, Unleash and the proxy alternately on the same flags${reason ? ` — skipped: ${reason}` : ""}`, async () => {
    const outDir = mkdtempSync(join(tmpdir(), "switchyard-bench-peers-"));
    outDirs.push(outDir);
    const run = await runNode([RUNNER, "--peers", "--smoke", "--out", outDir]);
    expect(run.code, run.stderr).toBe(0);
    const files = readdirSync(outDir).sort();
    expect(files).toEqual([expect.stringMatching(/-peers\.json$/), expect.stringMatching(/-peers\.md$/)]);
    const { peers } = JSON.parse(readFileSync(join(outDir, files[0]!), "utf8")) as { peers: PeersSection };
    expect(peers.skipped, run.stderr).toBeUndefined();
    expect(peers.agreement!.disagreements).toEqual([]);
    expect(peers.agreement!.enabledPerContext.unleash).toBeGreaterThan(1);
    expect(Object.keys(peers.importWarnings).sort()).toEqual(["ROLLOUT_REHASHED", "VARIANTS_REHASHED"]);
    expect(peers.runs.map((entry) => `${entry.round}${entry.peer[0]}`)).toEqual(["1s", "1u", "1p", "2s", "2u", "2p"]);
    for (const entry of peers.runs) {
      expect(entry.load.requests, entry.peer).toBeGreaterThan(0);
      expect(entry.load.errors, entry.peer).toBe(0);
      expect(entry.serverCpuUsPerRequest, entry.peer).toBeGreaterThanOrEqual(0);
    }
    expect(peers.figures.map((figure) => figure.peer)).toEqual(["switchyard", "unleash", "proxy"]);
    expect(peers.goals.map((goal) => goal.verdict).every((verdict) => verdict === "PASS" || verdict === "MISS")).toBe(true);
    const markdown = readFileSync(join(outDir, files[1]!), "utf8");
    expect(markdown).toContain("## Peers: Unleash 6.4.1 and the Unleash Proxy 1.4.19");
    expect(markdown).toMatch(/\| requests\/s against Unleash 6\.4\.1 GET \/api\/frontend \| [\d.]+× \| ≥ 40× \| (PASS|MISS) \|/);
  }, 300_000);
});
