/**
 * @module outbound/allow-list
 * Which destinations count as public, and the operator's per-environment exceptions (config
 * `environments.<name>.outbound.allow`: host names, IP addresses, CIDR ranges). Pure: no DNS, no
 * sockets; outbound/guard.ts applies it to every address it is about to connect to.
 */
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** A parsed allowance: host names matched exactly (lower case), and address ranges. */
export interface AllowList {
  hosts: ReadonlySet<string>;
  ranges: ReadonlyArray<[Address, number]>;
}

export const EMPTY_ALLOW_LIST: AllowList = { hosts: new Set(), ranges: [] };

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,62}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,62}[a-z0-9_])?)*\.?$/;

/** The problem with one allow entry, or undefined when it is a host name, an address or a CIDR range. */
export function allowEntryProblem(entry: string): string | undefined {
  if (entry.includes('/')) return ipaddr.isValidCIDR(entry) ? undefined : 'is not a valid CIDR range';
  if (ipaddr.isValid(entry) || HOST_NAME.test(entry.toLowerCase())) return undefined;
  return 'is neither a host name, an IP address nor a CIDR range';
}

/** The problems of a list of entries, each named `${at}.${index} '${entry}' …`. */
export function allowListProblems(entries: readonly string[], at: string): string[] {
  const problems: string[] = [];
  entries.forEach((entry, i) => {
    const problem = allowEntryProblem(entry);
    if (problem) problems.push(`${at}.${i} '${entry}' ${problem}`);
  });
  return problems;
}

/**
 * Lists parsed so far, by their (frozen, configured) entries array: every caller of one
 * environment's list gets the same object, so the guard pools its connections per list, and a
 * route parses nothing per request.
 */
const parsed = new WeakMap<readonly string[], AllowList>();

/** Parses entries already checked by allowEntryProblem (others are ignored); once per array. */
export function parseAllowList(entries: readonly string[]): AllowList {
  let list = parsed.get(entries);
  if (!list) parsed.set(entries, (list = parseEntries(entries)));
  return list;
}

function parseEntries(entries: readonly string[]): AllowList {
  const hosts = new Set<string>();
  const ranges: Array<[Address, number]> = [];
  for (const entry of entries) {
    if (allowEntryProblem(entry) !== undefined) continue;
    if (entry.includes('/')) ranges.push(ipaddr.parseCIDR(entry));
    else if (ipaddr.isValid(entry)) {
      const address = ipaddr.parse(entry);
      ranges.push([address, address.kind() === 'ipv4' ? 32 : 128]);
    } else hosts.add(entry.toLowerCase().replace(/\.$/, ''));
  }
  return { hosts, ranges };
}

/** An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is judged as the IPv4 address it carries. */
function unwrap(address: Address): Address {
  return address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() ? address.toIPv4Address() : address;
}

/**
 * Whether `ip` (a literal) is a public unicast address. Everything ipaddr.js puts in another
 * range is refused: loopback, private (RFC 1918), link-local (169.254/16, where cloud metadata
 * lives; fe80::/10), unique-local (fc00::/7), CGNAT (100.64/10), multicast, unspecified,
 * broadcast, reserved, and the IPv6 forms that embed an IPv4 address (6to4, Teredo, NAT64).
 */
export function isPublicAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  return unwrap(ipaddr.parse(ip)).range() === 'unicast';
}

/** Whether the operator allowed `ip`, or the host name it was resolved from. */
function isAllowed(ip: string, hostName: string, allow: AllowList): boolean {
  if (allow.hosts.has(hostName.toLowerCase().replace(/\.$/, ''))) return true;
  if (!ipaddr.isValid(ip)) return false;
  const address = unwrap(ipaddr.parse(ip));
  for (const [base, bits] of allow.ranges) {
    const range = unwrap(base);
    if (range.kind() === address.kind()) {
      // A range given in IPv4-mapped form keeps its prefix length relative to 128 bits.
      const prefix = base.kind() !== range.kind() ? bits - 96 : bits;
      if (address.match(range, prefix)) return true;
    }
  }
  return false;
}

/** The one test the guard applies to a destination address. */
export function mayConnect(ip: string, hostName: string, allow: AllowList): boolean {
  return isPublicAddress(ip) || isAllowed(ip, hostName, allow);
}
