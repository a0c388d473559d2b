/**
 * @module ingest/feeds/fetch
 * One HTTP GET of a feed as production needs it: conditional (If-None-Match / If-Modified-Since
 * from the last applied body), a timeout covering connect to last byte, retries with exponential
 * backoff and jitter on network errors, timeouts, 408/425/429/5xx (Retry-After honoured, capped),
 * and a byte limit enforced while streaming (after decompression, so a small gzip bomb is cut
 * off too). Every request goes through outbound/guard.ts; a refused, closed or unreachable
 * destination fails with one message (UNREACHABLE), so feed errors cannot map internal ports,
 * and the reason is kept on the error for the log. Knows nothing of formats or the catalog.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Response } from 'undici';
import type { AllowList } from '../../outbound/allow-list.ts';
import { guardedFetch, OutboundRefused } from '../../outbound/guard.ts';

export interface FetchPolicy {
  timeoutMs: number;
  maxBodyBytes: number;
  retries: number;
  retryBaseMs: number;
}

export interface FeedRequest {
  url: string;
  /** Extra request headers (the feed's static authentication header, Accept). */
  headers: Record<string, string>;
  etag?: string;
  lastModified?: string;
  /** Aborts waiting and reading (service shutdown). */
  signal?: AbortSignal;
  /** Internal destinations the feed's environment allows (outbound/allow-list.ts). */
  allow?: AllowList;
}

export type FeedResponse =
  | { kind: 'not_modified'; httpStatus: number; attempts: number }
  | {
      kind: 'body';
      httpStatus: number;
      bytes: Uint8Array;
      contentType?: string;
      etag?: string;
      lastModified?: string;
      attempts: number;
    };

/** What a feed's status says for a destination refused by policy, closed or unreachable alike. */
const UNREACHABLE = 'the feed could not be reached';

/**
 * A fetch that failed for good (after its retries); `httpStatus` when the server answered;
 * `detail` says why for the log (never shown to API clients: it would tell open ports from closed).
 */
export class FeedFetchError extends Error {
  readonly httpStatus?: number;
  readonly detail?: string;
  constructor(message: string, httpStatus?: number, detail?: string) {
    super(message);
    this.name = 'FeedFetchError';
    if (httpStatus !== undefined) this.httpStatus = httpStatus;
    if (detail !== undefined) this.detail = detail;
  }
}

const RETRIABLE_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);
/** A server asking for longer than this is not waited for within one poll. */
const MAX_RETRY_AFTER_MS = 60_000;
const USER_AGENT = 'Affinity-feed-poller/0.1';

class Retriable extends Error {
  constructor(
    message: string,
    readonly httpStatus?: number,
    readonly retryAfterMs?: number,
    readonly detail?: string,
  ) {
    super(message);
  }
}

function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS) : undefined;
}

async function readLimited(res: Response, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  // Content-Length counts encoded bytes; decoded ones are checked below while reading.
  if (declared > maxBytes && !res.headers.get('content-encoding')) {
    await res.body?.cancel();
    throw new FeedFetchError(`the body of ${declared} bytes exceeds the limit of ${maxBytes} bytes`, res.status);
  }
  if (!res.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new FeedFetchError(`the body exceeds the limit of ${maxBytes} bytes`, res.status);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}

async function attempt(request: FeedRequest, policy: FetchPolicy): Promise<FeedResponse> {
  const headers: Record<string, string> = { 'User-Agent': USER_AGENT, ...request.headers };
  if (request.etag) headers['If-None-Match'] = request.etag;
  if (request.lastModified) headers['If-Modified-Since'] = request.lastModified;
  const timeout = AbortSignal.timeout(policy.timeoutMs);
  const signal = request.signal ? AbortSignal.any([timeout, request.signal]) : timeout;
  let res: Response;
  try {
    res = await guardedFetch(request.url, { headers, signal }, request.allow);
  } catch (err) {
    if (request.signal?.aborted) throw new FeedFetchError('the poll was cancelled (service stopping)');
    if (timeout.aborted) throw new Retriable(`no answer within ${policy.timeoutMs} ms`);
    // Refused by policy or not connected: the same message and the same retries, so the status
    // of a feed pointed at an internal port tells nothing about that port.
    const cause = (err as { cause?: unknown }).cause;
    const refused = err instanceof OutboundRefused ? err : cause instanceof OutboundRefused ? cause : undefined;
    const c = cause as { code?: string; message?: string } | undefined;
    const detail = refused ? `refused: ${refused.message}` : `request failed: ${c?.code ?? c?.message ?? (err as Error).message}`;
    throw new Retriable(UNREACHABLE, undefined, undefined, detail);
  }
  try {
    if (res.status === 304) {
      await res.body?.cancel();
      return { kind: 'not_modified', httpStatus: 304, attempts: 1 };
    }
    if (res.status < 200 || res.status > 299) {
      await res.body?.cancel();
      const message = `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
      if (RETRIABLE_STATUS.has(res.status)) throw new Retriable(message, res.status, retryAfterMs(res.headers.get('retry-after')));
      throw new FeedFetchError(message, res.status);
    }
    const bytes = await readLimited(res, policy.maxBodyBytes);
    const out: FeedResponse = { kind: 'body', httpStatus: res.status, bytes, attempts: 1 };
    const contentType = res.headers.get('content-type');
    const etag = res.headers.get('etag');
    const lastModified = res.headers.get('last-modified');
    if (contentType) out.contentType = contentType;
    if (etag) out.etag = etag;
    if (lastModified) out.lastModified = lastModified;
    return out;
  } catch (err) {
    if (err instanceof FeedFetchError || err instanceof Retriable) throw err;
    if (request.signal?.aborted) throw new FeedFetchError('the poll was cancelled (service stopping)');
    if (timeout.aborted) throw new Retriable(`the body did not arrive within ${policy.timeoutMs} ms`);
    throw new Retriable(`reading the body failed: ${(err as Error).message}`);
  }
}

/** GETs the feed, retrying what may pass; throws FeedFetchError once it gives up. */
export async function fetchFeed(request: FeedRequest, policy: FetchPolicy): Promise<FeedResponse> {
  for (let n = 1; ; n++) {
    try {
      const response = await attempt(request, policy);
      return { ...response, attempts: n };
    } catch (err) {
      if (!(err instanceof Retriable)) throw err;
      if (n > policy.retries) {
        throw new FeedFetchError(`${err.message} (${n} attempt${n > 1 ? 's' : ''})`, err.httpStatus, err.detail);
      }
      // Exponential backoff with ±20% jitter, so feeds on one host do not retry in step.
      const backoff = policy.retryBaseMs * 2 ** (n - 1) * (0.8 + Math.random() * 0.4);
      try {
        await sleep(Math.max(backoff, err.retryAfterMs ?? 0), undefined, { signal: request.signal });
      } catch {
        throw new FeedFetchError('the poll was cancelled (service stopping)');
      }
    }
  }
}
