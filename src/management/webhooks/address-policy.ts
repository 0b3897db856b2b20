import ipaddr from "ipaddr.js";

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** The private targets an operator allows (`SWITCHYARD_WEBHOOK_ALLOW`): host names, and address ranges. */
export interface AddressAllowList {
  /** Lower-case host names, compared with the URL's host as written (before resolution). */
  readonly hosts: ReadonlySet<string>;
  readonly ranges: readonly (readonly [Address, number])[];
  /** The entries as given, for messages and docs. */
  readonly entries: readonly string[];
}

export const EMPTY_ALLOW_LIST: AddressAllowList = Object.freeze({ hosts: new Set<string>(), ranges: [], entries: [] });

/**
 * Reads `SWITCHYARD_WEBHOOK_ALLOW`: comma-separated host names, addresses and CIDRs (IPv4 or IPv6). Throws on the
 * first entry that is none of them, naming it, so a typo stops the service rather than silently allowing nothing.
 */
export function parseAllowList(value: string | undefined): AddressAllowList {
  const entries = (value ?? "").split(",").map((entry) => entry.trim()).filter((entry) => entry !== "");
  const hosts = new Set<string>();
  const ranges: (readonly [Address, number])[] = [];
  for (const entry of entries) {
    const range = parseRange(entry);
    if (range !== undefined) ranges.push(range);
    else if (isHostName(entry)) hosts.add(entry.toLowerCase().replace(/\.$/, ""));
    else throw new Error(`SWITCHYARD_WEBHOOK_ALLOW: "${entry}" is neither a host name, an IP address nor a CIDR such as 127.0.0.1/32 or fd00::/8`);
  }
  return Object.freeze({ hosts, ranges: Object.freeze(ranges), entries: Object.freeze(entries) });
}

/** An address or CIDR in its plain notation only (no `127.1`, no hex): an operator's entry means what it shows. */
function parseRange(entry: string): readonly [Address, number] | undefined {
  const [addressPart = "", prefixPart, ...rest] = entry.split("/");
  if (rest.length > 0) return undefined;
  const address = ipaddr.IPv4.isValidFourPartDecimal(addressPart) ? ipaddr.IPv4.parse(addressPart) : ipaddr.IPv6.isValid(addressPart) ? ipaddr.IPv6.parse(addressPart) : undefined;
  if (address === undefined) return undefined;
  const bits = address.kind() === "ipv4" ? 32 : 128;
  if (prefixPart === undefined) return normaliseRange([address, bits]);
  if (!/^\d{1,3}$/.test(prefixPart) || Number(prefixPart) > bits) return undefined;
  return normaliseRange([address, Number(prefixPart)]);
}

/** `::ffff:10.0.0.0/104` and `10.0.0.0/8` are the same range; keep the IPv4 form so IPv4 addresses match it. */
function normaliseRange([address, prefix]: readonly [Address, number]): readonly [Address, number] {
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() && prefix >= 96) return [address.toIPv4Address(), prefix - 96];
  return [address, prefix];
}

function isHostName(entry: string): boolean {
  if (!/^[A-Za-z0-9.-]+$/.test(entry)) return false;
  try {
    return new URL(`http://${entry}/`).hostname === entry.toLowerCase();
  } catch {
    return false;
  }
}

/** The address a URL's host names literally (`http://2130706433/` means 127.0.0.1), or undefined for a name. */
export function literalAddress(hostname: string): string | undefined {
  // WHATWG URL parsing has already turned decimal, octal, hex and short IPv4 forms into dotted quads.
  if (hostname.startsWith("[") && hostname.endsWith("]")) return hostname.slice(1, -1);
  return ipaddr.IPv4.isValidFourPartDecimal(hostname) ? hostname : undefined;
}

const RANGE_WORDS: Record<string, string> = {
  unspecified: "an unspecified address",
  broadcast: "the broadcast address",
  multicast: "a multicast address",
  linkLocal: "a link-local address (cloud metadata lives there)",
  loopback: "a loopback address",
  carrierGradeNat: "a carrier-grade NAT address",
  private: "a private (RFC 1918) address",
  reserved: "a reserved or documentation address",
  as112: "a reserved (AS112) address",
  amt: "a reserved (AMT) address",
  uniqueLocal: "a unique-local address",
  deprecatedSiteLocal: "a site-local address",
  discard: "a discard-only address",
  rfc6145: "an IPv4-translated address",
  teredo: "a Teredo tunnel address",
  benchmarking: "a benchmarking address",
  as112v6: "a reserved (AS112) address",
  deprecatedOrchid: "a reserved (ORCHID) address",
  orchid2: "a reserved (ORCHID) address",
  droneRemoteIdProtocolEntityTags: "a reserved address",
  segmentRouting: "a segment-routing address",
};

/** IPv6 global unicast (2000::/3); anything outside it that ipaddr.js calls "unicast" is unassigned space. */
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR("2000::/3");
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR("64:ff9b::/96");

/** Why an address may not be a webhook's target, or undefined when it is a public unicast address. */
export function refusalOf(address: string): string | undefined {
  const parsed = parseAddress(address);
  return parsed === undefined ? `${address} is not an IP address` : refusalOfParsed(parsed, address);
}

/**
 * An address as the socket will read it. IPv6 goes through the WHATWG serialiser first: ipaddr.js reads the
 * IPv4-compatible `::127.0.0.1` as IPv4-mapped, which is another address; IPv4 is taken in dotted quads only.
 */
function parseAddress(text: string): Address | undefined {
  if (text.includes(":")) {
    try {
      const canonical = new URL(`http://[${text.replace(/%.*$/, "")}]/`).hostname.slice(1, -1);
      return ipaddr.IPv6.parse(canonical);
    } catch {
      return undefined;
    }
  }
  return ipaddr.IPv4.isValidFourPartDecimal(text) ? ipaddr.IPv4.parse(text) : undefined;
}

function refusalOfParsed(address: Address, shown: string): string | undefined {
  if (address instanceof ipaddr.IPv4) {
    const range = address.range();
    return range === "unicast" ? undefined : `${shown} is ${RANGE_WORDS[range] ?? `a ${range} address`}`;
  }
  const embedded = embeddedIPv4(address);
  if (embedded !== undefined) {
    const inner = refusalOfParsed(embedded, embedded.toString());
    return inner === undefined ? undefined : `${shown} embeds ${inner}`;
  }
  const range = address.range();
  if (range !== "unicast") return `${shown} is ${RANGE_WORDS[range] ?? `a ${range} address`}`;
  // IPv4-compatible (::a.b.c.d, deprecated) and other unassigned space land here.
  if (!address.match(GLOBAL_UNICAST_V6)) return `${shown} is not a global unicast address`;
  return undefined;
}

/** The IPv4 address an IPv6 form carries and reaches (mapped, NAT64 well-known prefix, 6to4), if any. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const range = address.range();
  const bytes = address.toByteArray();
  if (range === "ipv4Mapped") return address.toIPv4Address();
  if (range === "rfc6052" && address.match(NAT64_WELL_KNOWN)) return new ipaddr.IPv4(bytes.slice(12, 16));
  if (range === "6to4") return new ipaddr.IPv4(bytes.slice(2, 6));
  return undefined;
}

/** Whether the operator's allow list admits this host (as written in the URL) or this resolved address. */
export function isAllowed(allow: AddressAllowList, hostname: string, address: string): boolean {
  if (allow.hosts.has(hostname.toLowerCase().replace(/\.$/, ""))) return true;
  let parsed = allow.ranges.length === 0 ? undefined : parseAddress(address);
  if (parsed === undefined) return false;
  if (parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress()) parsed = parsed.toIPv4Address();
  const candidate = parsed;
  return allow.ranges.some(([network, prefix]) => network.kind() === candidate.kind() && candidate.match(network, prefix));
}
