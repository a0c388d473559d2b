/**
 * @module ingest/feeds/poll
 * One poll of one feed: conditional fetch, decode, parse by format, validate each entry as the
 * Items API does, and write the valid ones through the catalog's batch write (create or update;
 * the disable marker sets the enabled state; items absent from the feed are left alone). A body
 * that fails to fetch or parse changes nothing in the catalog and is the poll's error; invalid
 * entries are skipped with their reason. Returns the feed's new status; never throws.
 */
import { createHash } from 'node:crypto';
import { MAX_REJECTED_SHOWN, emptyFeedStatus, type FeedDefinition, type FeedStatus, type RejectedEntry } from '../../domain/feed.ts';
import type { CatalogWrite, Catalog } from '../../store/catalog.ts';
import { toItem } from '../normalize.ts';
import { decodeBody } from './decode.ts';
import type { AllowList } from '../../outbound/allow-list.ts';
import type { LogFn } from '../log.ts';
import { FeedFetchError, fetchFeed, type FetchPolicy } from './fetch.ts';
import { parseMapped } from './mapped.ts';
import { FeedParseError, type ParsedFeed } from './parsed-feed.ts';
import { parseRssAtom } from './rss-atom.ts';

export interface PollDeps {
  catalog: Catalog;
  /** Item types of the feed's environment. */
  itemTypes: readonly string[];
  policy: FetchPolicy;
  /** Internal destinations the feed's environment allows. */
  allow: AllowList;
  signal?: AbortSignal;
  /** Why a fetch failed, beyond what the feed's status may say (outbound/guard.ts). */
  log?: LogFn;
}

/** Entries written per transaction: a large feed does not hold the write lock for long. */
const WRITE_CHUNK = 1000;

const ACCEPT: Record<FeedDefinition['format'], string> = {
  rss: 'application/rss+xml, application/atom+xml, application/rdf+xml;q=0.9, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5',
  atom: 'application/atom+xml, application/rss+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5',
  json: 'application/json, application/feed+json, */*;q=0.5',
  xml: 'application/xml, text/xml, */*;q=0.5',
  csv: 'text/csv, */*;q=0.5',
};

/** What of a definition decides how a body is read: a change re-applies even an unchanged body. */
function fingerprint(def: FeedDefinition): string {
  const { url, format, itemType, disableMarker, itemsPath, mapping, delimiter } = def;
  return createHash('sha256').update(JSON.stringify([url, format, itemType, disableMarker, itemsPath, mapping, delimiter])).digest('base64url');
}

function parse(text: string, def: FeedDefinition): Promise<ParsedFeed> | ParsedFeed {
  return def.format === 'rss' || def.format === 'atom' ? parseRssAtom(text, def.disableMarker) : parseMapped(text, def);
}

/** Polls `def` once; `previous` is its last status (validators, failure count). */
export async function pollFeed(def: FeedDefinition, previous: FeedStatus, deps: PollDeps): Promise<FeedStatus> {
  const started = Date.now();
  const print = fingerprint(def);
  const validators = previous.validators?.url === def.url && previous.validators.fingerprint === print ? previous.validators : undefined;
  // This poll's counters start from zero; validators, failure count and the rest carry over.
  const status: FeedStatus = {
    ...previous,
    ...emptyFeedStatus(),
    polls: previous.polls + 1,
    consecutiveFailures: previous.consecutiveFailures,
    lastPollAt: new Date(started).toISOString(),
  };
  delete status.lastError;
  delete status.httpStatus;
  const fail = (message: string, httpStatus?: number): FeedStatus => {
    status.outcome = 'error';
    status.lastError = message;
    if (httpStatus !== undefined) status.httpStatus = httpStatus;
    status.consecutiveFailures = previous.consecutiveFailures + 1;
    status.durationMs = Date.now() - started;
    return status;
  };
  const succeed = (outcome: FeedStatus['outcome']): FeedStatus => {
    status.outcome = outcome;
    status.lastSuccessAt = new Date().toISOString();
    status.consecutiveFailures = 0;
    status.durationMs = Date.now() - started;
    return status;
  };

  const headers: Record<string, string> = { Accept: ACCEPT[def.format] };
  if (def.authHeader) headers[def.authHeader.name] = def.authHeader.value;
  let response;
  try {
    response = await fetchFeed(
      { url: def.url, headers, allow: deps.allow, ...(validators?.etag ? { etag: validators.etag } : {}), ...(validators?.lastModified ? { lastModified: validators.lastModified } : {}), ...(deps.signal ? { signal: deps.signal } : {}) },
      deps.policy,
    );
  } catch (err) {
    if (err instanceof FeedFetchError) {
      if (err.detail) deps.log?.('warn', { environment: def.environment, feed_id: def.feedId, url: def.url, detail: err.detail }, 'feed fetch failed');
      return fail(`fetch: ${err.message}`, err.httpStatus);
    }
    return fail(`fetch: ${(err as Error).message}`);
  }
  status.httpStatus = response.httpStatus;
  if (response.kind === 'not_modified') return succeed('not_modified');

  const bodyHash = createHash('sha256').update(response.bytes).digest('base64url');
  const nextValidators: NonNullable<FeedStatus['validators']> = { url: def.url, fingerprint: print, bodyHash };
  if (response.etag) nextValidators.etag = response.etag;
  if (response.lastModified) nextValidators.lastModified = response.lastModified;
  if (validators?.bodyHash === bodyHash) {
    // Same bytes as the last applied body (a server without validators): nothing to do.
    status.validators = nextValidators;
    return succeed('unchanged');
  }

  const xml = def.format !== 'json' && def.format !== 'csv';
  const decoded = decodeBody(response.bytes, response.contentType, xml);
  status.encoding = decoded.encoding;
  let parsed: ParsedFeed;
  try {
    parsed = await parse(decoded.text, def);
  } catch (err) {
    status.warnings = decoded.warnings;
    if (err instanceof FeedParseError) return fail(`parse: ${err.message}`, response.httpStatus);
    return fail(`parse: unexpected ${(err as Error).name}: ${(err as Error).message}`, response.httpStatus);
  }
  status.detectedFormat = parsed.detectedFormat;
  status.warnings = [...decoded.warnings, ...parsed.warnings];
  status.entriesSeen = parsed.entries.length;

  const rejected: RejectedEntry[] = [];
  const writes: CatalogWrite[] = [];
  const firstSeen = new Map<string, number>();
  for (const entry of parsed.entries) {
    if ('reason' in entry) {
      rejected.push(entry);
      continue;
    }
    const result = toItem({ environment: def.environment, item_type: def.itemType, ...entry.candidate }, def.environment, deps.itemTypes);
    const itemId = typeof entry.candidate.item_id === 'string' ? entry.candidate.item_id : undefined;
    if ('reason' in result) {
      rejected.push({ entry: entry.entry, ...(itemId !== undefined ? { itemId } : {}), reason: result.reason });
      continue;
    }
    const first = firstSeen.get(result.item.item_id);
    if (first !== undefined) {
      rejected.push({ entry: entry.entry, itemId: result.item.item_id, reason: `repeats the item_id of entry ${first}; the first one is applied` });
      continue;
    }
    firstSeen.set(result.item.item_id, entry.entry);
    writes.push({ op: 'put', item: result.item, enabled: !entry.disabled });
  }
  try {
    for (let i = 0; i < writes.length; i += WRITE_CHUNK) {
      const results = await deps.catalog.applyBatch(writes.slice(i, i + WRITE_CHUNK));
      for (const r of results) {
        if (r.op === 'create') status.created++;
        else if (r.op === 'update') status.updated++;
        if (r.state === 'enable') status.enabled++;
        else if (r.state === 'disable') status.disabled++;
        if (r.op === 'unchanged' && r.state === undefined) status.entriesUnchanged++;
        else status.entriesApplied++;
      }
    }
  } catch (err) {
    // A storage failure (disk, map full): what was committed stays; the next poll re-applies the rest.
    return fail(`store: ${(err as Error).message}`, response.httpStatus);
  }
  rejected.sort((a, b) => a.entry - b.entry);
  status.entriesRejected = rejected.length;
  status.rejected = rejected.slice(0, MAX_REJECTED_SHOWN);
  status.validators = nextValidators;
  return succeed('applied');
}
