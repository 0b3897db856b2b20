import { describe, expect, it } from "vitest";
import { isAllowed, literalAddress, parseAllowList, refusalOf } from "./address-policy.js";
import { checkWebhookUrl, type LookupFunction } from "./safe-post.js";

const NOTHING_ALLOWED = parseAllowList(undefined);

/** Every address here must be refused, with the word that says why. */
const REFUSED: [string, RegExp][] = [
  ["127.0.0.1", /loopback/],
  ["127.255.255.254", /loopback/],
  ["10.0.0.1", /private/],
  ["172.16.0.1", /private/],
  ["172.31.255.255", /private/],
  ["192.168.1.1", /private/],
  ["100.64.0.1", /carrier-grade NAT/],
  ["100.127.255.255", /carrier-grade NAT/],
  ["169.254.169.254", /link-local/],
  ["0.0.0.0", /unspecified/],
  ["0.1.2.3", /unspecified/],
  ["224.0.0.1", /multicast/],
  ["239.255.255.250", /multicast/],
  ["255.255.255.255", /broadcast/],
  ["240.0.0.1", /reserved/],
  ["192.0.2.1", /reserved/],
  ["198.51.100.7", /reserved/],
  ["203.0.113.9", /reserved/],
  ["198.18.0.1", /reserved/],
  ["192.0.0.8", /reserved/],
  ["::1", /loopback/],
  ["::", /unspecified/],
  ["fe80::1", /link-local/],
  ["febf::1", /link-local/],
  ["fc00::1", /unique-local/],
  ["fd12:3456::1", /unique-local/],
  ["ff02::1", /multicast/],
  ["fec0::1", /site-local/],
  ["2001:db8::1", /reserved/],
  ["2001:2::1", /benchmarking/],
  ["2001::1", /Teredo/],
  ["100::1", /discard/],
  ["::ffff:127.0.0.1", /embeds 127\.0\.0\.1 is a loopback/],
  ["::ffff:7f00:1", /embeds 127\.0\.0\.1 is a loopback/],
  ["::ffff:169.254.169.254", /embeds 169\.254\.169\.254 is a link-local/],
  ["::ffff:10.0.0.1", /embeds 10\.0\.0\.1 is a private/],
  ["::127.0.0.1", /not a global unicast/],
  ["::10.0.0.1", /not a global unicast/],
  // IPv4-compatible, not mapped: it reaches ::808:808, never 8.8.8.8.
  ["::8.8.8.8", /not a global unicast/],
  ["fe80::1%eth0", /link-local/],
  ["1.2.3", /not an IP address/],
  ["0x7f.1", /not an IP address/],
  ["64:ff9b::a00:1", /embeds 10\.0\.0\.1 is a private/],
  ["64:ff9b::169.254.169.254", /embeds 169\.254\.169\.254/],
  ["64:ff9b:1::1", /IPv4-translated|rfc6052|reserved|address/],
  ["2002:7f00:1::1", /embeds 127\.0\.0\.1 is a loopback/],
  ["2002:a9fe:a9fe::1", /embeds 169\.254\.169\.254 is a link-local/],
  ["::ffff:0:7f00:1", /IPv4-translated/],
  ["4000::1", /not a global unicast/],
  ["not-an-ip", /not an IP address/],
];

const PUBLIC = ["93.184.215.14", "8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "2a00:1450:4001:82b::200e", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"];

describe("refusalOf", () => {
  it.each(REFUSED)("refuses %s", (address, why) => {
    expect(refusalOf(address)).toMatch(why);
  });

  it.each(PUBLIC)("accepts the public address %s", (address) => {
    expect(refusalOf(address)).toBeUndefined();
  });
});

/** URL hosts in the odd forms a parser may meet, and the address each one really means. */
const LITERALS: [string, string][] = [
  ["http://2130706433/", "127.0.0.1"],
  ["http://0x7f000001/", "127.0.0.1"],
  ["http://0177.0.0.1/", "127.0.0.1"],
  ["http://0x7f.0.0.1/", "127.0.0.1"],
  ["http://127.1/", "127.0.0.1"],
  ["http://127.0.1/", "127.0.0.1"],
  ["http://017700000001/", "127.0.0.1"],
  ["http://0xA9.0xFE.0xA9.0xFE/", "169.254.169.254"],
  ["http://2852039166/", "169.254.169.254"],
  ["http://10.1/", "10.0.0.1"],
  ["http://0/", "0.0.0.0"],
  ["http://127.0.0.1./", "127.0.0.1"],
  ["http://[::1]/", "::1"],
  ["http://[0:0:0:0:0:0:0:1]/", "::1"],
  ["http://[::ffff:127.0.0.1]/", "::ffff:7f00:1"],
  ["http://[::FFFF:a9fe:a9fe]:8080/x", "::ffff:a9fe:a9fe"],
  ["https://[fe80::1]/", "fe80::1"],
  ["http://user:pw@[fd00::1]:9/", "fd00::1"],
];

describe("literal hosts", () => {
  it.each(LITERALS)("%s means %s", (url, meant) => {
    expect(literalAddress(new URL(url).hostname)).toBe(meant);
  });

  it("leaves host names to the resolver", () => {
    expect(literalAddress("hooks.example.com")).toBeUndefined();
    expect(literalAddress("1.2.3.4.example")).toBeUndefined();
  });

  it.each(LITERALS)("checkWebhookUrl refuses %s without asking a resolver", async (url) => {
    const asked: string[] = [];
    const lookup: LookupFunction = (name, _options, callback) => {
      asked.push(name);
      callback(null, [{ address: "8.8.8.8", family: 4 }]);
    };
    const check = await checkWebhookUrl(url, { allow: NOTHING_ALLOWED, lookup });
    expect(check.ok).toBe(false);
    expect(asked).toEqual([]);
  });
});

describe("checkWebhookUrl", () => {
  const resolving = (table: Record<string, string[]>): LookupFunction => (name, _options, callback) => {
    const addresses = table[name];
    if (addresses === undefined) callback(Object.assign(new Error(`no ${name}`), { code: "ENOTFOUND" }), []);
    else callback(null, addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })));
  };
  const lookup = resolving({
    "hooks.example.com": ["93.184.215.14", "2606:4700::1"],
    "mixed.example.com": ["93.184.215.14", "10.0.0.1"],
    "metadata.example.com": ["169.254.169.254"],
    "localhost": ["127.0.0.1", "::1"],
    "empty.example.com": [],
  });

  it("accepts a name whose every address is public, and returns them all", async () => {
    expect(await checkWebhookUrl("https://hooks.example.com/in", { allow: NOTHING_ALLOWED, lookup })).toEqual({ ok: true, addresses: ["93.184.215.14", "2606:4700::1"] });
  });

  it("refuses a name when any one of its addresses is refused", async () => {
    expect(await checkWebhookUrl("https://mixed.example.com/in", { allow: NOTHING_ALLOWED, lookup })).toEqual({ ok: false, reason: "mixed.example.com resolves to 10.0.0.1 is a private (RFC 1918) address" });
    expect(await checkWebhookUrl("http://metadata.example.com/latest", { allow: NOTHING_ALLOWED, lookup })).toMatchObject({ ok: false, reason: expect.stringMatching(/link-local/) });
    expect(await checkWebhookUrl("http://localhost:8080/", { allow: NOTHING_ALLOWED, lookup })).toMatchObject({ ok: false, reason: expect.stringMatching(/loopback/) });
  });

  it("refuses other schemes, names that do not resolve and text that is no URL", async () => {
    for (const url of ["ftp://hooks.example.com/", "file:///etc/passwd", "gopher://hooks.example.com/", "javascript:alert(1)", "data:text/plain,x"]) {
      expect(await checkWebhookUrl(url, { allow: NOTHING_ALLOWED, lookup }), url).toMatchObject({ ok: false, reason: expect.stringMatching(/scheme/) });
    }
    expect(await checkWebhookUrl("not a url", { allow: NOTHING_ALLOWED, lookup })).toEqual({ ok: false, reason: "not a valid URL" });
    expect(await checkWebhookUrl("http://nowhere.example.com/", { allow: NOTHING_ALLOWED, lookup })).toEqual({ ok: false, reason: "nowhere.example.com could not be resolved (ENOTFOUND)" });
    expect(await checkWebhookUrl("http://empty.example.com/", { allow: NOTHING_ALLOWED, lookup })).toEqual({ ok: false, reason: "empty.example.com resolves to no address" });
  });

  it("lets the allow list admit listed addresses, ranges and hosts, and nothing else", async () => {
    const allow = parseAllowList("127.0.0.1/32, 10.0.0.0/8,metadata.example.com");
    expect(await checkWebhookUrl("http://127.0.0.1:9/", { allow, lookup })).toEqual({ ok: true, addresses: ["127.0.0.1"] });
    expect(await checkWebhookUrl("http://[::ffff:127.0.0.1]:9/", { allow, lookup })).toEqual({ ok: true, addresses: ["::ffff:7f00:1"] });
    expect(await checkWebhookUrl("http://mixed.example.com/", { allow, lookup })).toMatchObject({ ok: true });
    expect(await checkWebhookUrl("http://METADATA.example.com/", { allow, lookup })).toMatchObject({ ok: true });
    expect(await checkWebhookUrl("http://127.0.0.2/", { allow, lookup })).toMatchObject({ ok: false });
    // localhost resolves to ::1 too, which the list does not name.
    expect(await checkWebhookUrl("http://localhost/", { allow, lookup })).toMatchObject({ ok: false, reason: expect.stringMatching(/::1 is a loopback/) });
    expect(await checkWebhookUrl("http://169.254.169.254/", { allow, lookup })).toMatchObject({ ok: false });
  });
});

describe("parseAllowList", () => {
  it("reads hosts, addresses and CIDRs of both families, ignoring blanks", () => {
    const allow = parseAllowList(" 127.0.0.1/32 ,, fd00::/8, ::1, 10.1.2.3, hooks.internal ,Build-Box.local.");
    expect(allow.entries).toEqual(["127.0.0.1/32", "fd00::/8", "::1", "10.1.2.3", "hooks.internal", "Build-Box.local."]);
    expect([...allow.hosts]).toEqual(["hooks.internal", "build-box.local"]);
    expect(isAllowed(allow, "x", "fd12::5")).toBe(true);
    expect(isAllowed(allow, "x", "fe80::1")).toBe(false);
    expect(isAllowed(allow, "x", "::1")).toBe(true);
    expect(isAllowed(allow, "x", "10.1.2.3")).toBe(true);
    expect(isAllowed(allow, "x", "10.1.2.4")).toBe(false);
    expect(isAllowed(allow, "build-box.local", "192.168.0.9")).toBe(true);
    expect(isAllowed(allow, "hooks.internal.", "10.9.9.9")).toBe(true);
  });

  it("matches an IPv4 range against IPv4-mapped addresses and a mapped range against IPv4", () => {
    const allow = parseAllowList("::ffff:192.168.0.0/112");
    expect(isAllowed(allow, "x", "192.168.4.5")).toBe(true);
    expect(isAllowed(parseAllowList("192.168.0.0/16"), "x", "::ffff:192.168.4.5")).toBe(true);
  });

  it("is empty when unset or blank", () => {
    expect(parseAllowList(undefined).entries).toEqual([]);
    expect(parseAllowList("").entries).toEqual([]);
    expect(parseAllowList(" , ").entries).toEqual([]);
  });

  it.each(["10.0.0.0/33", "fd00::/129", "10.0.0.0/8/8", "127.1", "0x7f000001", "http://hooks.example.com", "hooks.example.com:8080", "a b", "10.0.0.0/", "10.0.0.0/x", "*.example.com", "1.2.3.4/-1"])("refuses %s, naming it", (entry) => {
    expect(() => parseAllowList(`127.0.0.1/32,${entry}`)).toThrow(`SWITCHYARD_WEBHOOK_ALLOW: "${entry}" is neither a host name, an IP address nor a CIDR`);
  });
});
