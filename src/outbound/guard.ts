/**
 * @module outbound/guard
 * The one way the service fetches a URL it was given (feeds now; webhooks or JWKS later): no
 * request to loopback, private, link-local, unique-local, CGNAT, multicast or unspecified
 * addresses (or IPv4-mapped forms of them) unless the environment's allow list names the host
 * or range. The host name is resolved once, every address is checked, and the socket connects
 * to the address that was checked (the check is the connection's own DNS lookup), so a second
 * lookup cannot rebind the name to an internal address. Redirects are followed by hand, at most
 * MAX_REDIRECTS, each hop checked the same way. Knows nothing of feeds.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, fetch, type RequestInit, type Response } from 'undici';
import { EMPTY_ALLOW_LIST, mayConnect, type AllowList } from './allow-list.ts';

/** Redirect hops followed at most (each one checked like the first request). */
const MAX_REDIRECTS = 5;

/** A destination the policy refuses; `message` is for the log, never for API clients. */
export class OutboundRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundRefused';
  }
}

/** The URL's host as a literal address or name (IPv6 without brackets). */
function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Why `url` may never be fetched under `allow`, judged without DNS: not http(s), or a literal
 * host (an IP address in any form WHATWG URL parsing normalises, e.g. `2130706433` → 127.0.0.1,
 * or `localhost`) that is refused. Undefined when a fetch may be tried.
 */
export function literalRefusal(rawUrl: string, allow: AllowList): string | undefined {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  const host = hostOf(url);
  if (isIP(host) !== 0 && !mayConnect(host, host, allow)) return `points at an internal address (${host})`;
  // Names that resolve to loopback by convention (RFC 6761), without asking DNS.
  if (/(^|\.)localhost\.?$/i.test(host) && !mayConnect('127.0.0.1', host, allow)) return `points at an internal host (${host})`;
  return undefined;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for net.connect that resolves once and hands back only checked addresses. */
function checkedLookup(allow: AllowList) {
  return (hostName: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostName, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const refused = addresses.find((a) => !mayConnect(a.address, hostName, allow));
      // One internal address among public ones is refused whole: a name is one destination.
      if (refused || addresses.length === 0) {
        const error: NodeJS.ErrnoException = new OutboundRefused(`${hostName} resolves to an internal address (${refused?.address ?? 'none'})`);
        error.code = 'EOUTBOUNDREFUSED';
        return callback(error, []);
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/** One connection pool per allow list: its lookup is the check. */
const agents = new WeakMap<AllowList, Agent>();
function agentFor(allow: AllowList): Agent {
  let agent = agents.get(allow);
  if (!agent) {
    agent = new Agent({ connect: { lookup: checkedLookup(allow) } as Agent.Options['connect'] });
    agents.set(allow, agent);
  }
  return agent;
}

const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);
/** Request headers kept when a redirect leaves the origin: a feed's own auth header is not. */
const CROSS_ORIGIN_HEADERS = new Set(['accept', 'user-agent', 'if-none-match', 'if-modified-since']);

function sameOriginHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => CROSS_ORIGIN_HEADERS.has(name.toLowerCase())));
}

/**
 * GETs `url` under the policy, following redirects by hand. Throws OutboundRefused for a refused
 * destination (at any hop) or too many redirects; other failures are undici's (network errors,
 * aborts). The caller reads or cancels the returned body.
 */
export async function guardedFetch(
  url: string,
  init: Omit<RequestInit, 'headers'> & { headers?: Record<string, string> },
  allow: AllowList = EMPTY_ALLOW_LIST,
): Promise<Response> {
  let current = url;
  let headers = init.headers ?? {};
  for (let hop = 0; ; hop++) {
    const refusal = literalRefusal(current, allow);
    if (refusal) throw new OutboundRefused(`${current} ${refusal}`);
    const res = await fetch(current, { ...init, headers, redirect: 'manual', dispatcher: agentFor(allow) });
    const location = res.headers.get('location');
    if (!REDIRECT_STATUS.has(res.status) || location === null) return res;
    await res.body?.cancel();
    if (hop >= MAX_REDIRECTS) throw new OutboundRefused(`more than ${MAX_REDIRECTS} redirects from ${url}`);
    const next = new URL(location, current);
    if (next.origin !== new URL(current).origin) headers = sameOriginHeaders(headers);
    current = next.href;
  }
}
