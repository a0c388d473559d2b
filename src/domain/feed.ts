/**
 * @module domain/feed
 * A catalog feed (SPEC.md "Feed read (pull)") as configured and stored, its poll status, and the
 * pure rules on a definition: durations, which Item fields a mapping may fill, which options
 * belong to which format. No I/O; the wire and config codecs live in http/schemas/feed.ts and
 * config/load.ts.
 */

/** `rss` and `atom` are one parser that detects RSS 2.0/1.0/0.9x and Atom by the root element. */
export const FEED_FORMATS = ['rss', 'atom', 'json', 'xml', 'csv'] as const;
export type FeedFormat = (typeof FEED_FORMATS)[number];

/** Formats whose entries are turned into items through a field mapping. */
export const MAPPED_FORMATS: readonly FeedFormat[] = ['json', 'xml', 'csv'];

export interface FeedHeader {
  name: string;
  value: string;
}

/** The entry field (source path, or RSS/Atom element name) and value that mean "disabled". */
export interface DisableMarker {
  field: string;
  value: string;
}

export interface FeedDefinition {
  feedId: string;
  environment: string;
  url: string;
  format: FeedFormat;
  itemType: string;
  intervalSec: number;
  /** A static header sent with every request (SPEC.md: "a static authentication header"). */
  authHeader?: FeedHeader;
  disableMarker?: DisableMarker;
  /** JSON and XML: where the entries are (dot path; XML starts at the root element). */
  itemsPath?: string;
  /** JSON, XML, CSV: source path → Item field (`item_attributes.<key>` for an attribute). */
  mapping?: Record<string, string>;
  /** CSV: the field delimiter (default `,`). */
  delimiter?: string;
  /** `config`: declared in the configuration file (read-only at run time); `api`: added by an operator. */
  source: 'config' | 'api';
  createdAt: string;
  updatedAt: string;
}

/** One entry a poll did not apply, and why. */
export interface RejectedEntry {
  /** 1-based position of the entry in the feed. */
  entry: number;
  itemId?: string;
  reason: string;
}

export type PollOutcome = 'applied' | 'not_modified' | 'unchanged' | 'error';

/** What the last poll of a feed did (kept in LMDB, shown by the API and the CLI). */
export interface FeedStatus {
  polls: number;
  lastPollAt?: string;
  lastSuccessAt?: string;
  /** Unix ms: when the scheduler polls next. */
  nextPollAt?: number;
  outcome?: PollOutcome;
  httpStatus?: number;
  /** rss2, rss1, rss0.9x, atom, json, xml, csv. */
  detectedFormat?: string;
  encoding?: string;
  entriesSeen: number;
  entriesApplied: number;
  entriesUnchanged: number;
  entriesRejected: number;
  created: number;
  updated: number;
  enabled: number;
  disabled: number;
  /** The first MAX_REJECTED_SHOWN rejected entries of the last poll. */
  rejected: RejectedEntry[];
  lastError?: string;
  consecutiveFailures: number;
  durationMs?: number;
  warnings: string[];
  /** Conditional GET validators and the hash of the last applied body, for the URL they belong to. */
  validators?: { url: string; fingerprint: string; etag?: string; lastModified?: string; bodyHash?: string };
}

export const MAX_REJECTED_SHOWN = 100;

export function emptyFeedStatus(): FeedStatus {
  return {
    polls: 0,
    entriesSeen: 0,
    entriesApplied: 0,
    entriesUnchanged: 0,
    entriesRejected: 0,
    created: 0,
    updated: 0,
    enabled: 0,
    disabled: 0,
    rejected: [],
    consecutiveFailures: 0,
    warnings: [],
  };
}

export const DEFAULT_INTERVAL_SEC = 15 * 60;
export const MIN_INTERVAL_SEC = 1;
export const MAX_INTERVAL_SEC = 30 * 24 * 3600;

const UNIT_SEC: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** `90s`, `15m`, `1h`, `1d` → seconds; undefined when not such a duration or out of range. */
export function parseInterval(text: string): number | undefined {
  const match = /^(\d{1,7})([smhd])$/.exec(text.trim());
  if (!match) return undefined;
  const sec = Number(match[1]) * UNIT_SEC[match[2]!]!;
  return sec >= MIN_INTERVAL_SEC && sec <= MAX_INTERVAL_SEC ? sec : undefined;
}

/** Seconds → the largest unit that divides them exactly (`900` → `15m`). */
export function formatInterval(sec: number): string {
  for (const unit of ['d', 'h', 'm'] as const) {
    if (sec % UNIT_SEC[unit]! === 0) return `${sec / UNIT_SEC[unit]!}${unit}`;
  }
  return `${sec}s`;
}

/** Item fields a mapping may fill; `environment` and `item_type` come from the feed. */
export const MAPPABLE_FIELDS = [
  'item_id',
  'title',
  'description',
  'content_body',
  'uri',
  'categories',
  'tags',
  'images',
  'language',
  'item_attributes',
  'publication_datetime',
  'end_datetime',
  'access_type',
  'flags',
  'parent',
  'ancestry_level',
] as const;

/** Problems of a definition beyond its JSON shape, as [field's path segments, message] (wire field names). */
export function feedDefinitionProblems(def: Omit<FeedDefinition, 'source' | 'createdAt' | 'updatedAt'>, itemTypes: readonly string[]): Array<[field: string[], message: string]> {
  const problems: Array<[string[], string]> = [];
  if (!itemTypes.includes(def.itemType)) {
    problems.push([['item_type'], `'${def.itemType}' is not an item type of environment '${def.environment}' (${itemTypes.join(', ')})`]);
  }
  let url: URL | undefined;
  try {
    url = new URL(def.url);
  } catch {
    problems.push([['url'], 'is not an absolute URL']);
  }
  if (url && url.protocol !== 'http:' && url.protocol !== 'https:') problems.push([['url'], 'must be an http or https URL']);
  if (url && (url.username || url.password)) problems.push([['url'], 'must not carry credentials: use auth_header']);
  const mapped = MAPPED_FORMATS.includes(def.format);
  if (mapped) {
    const targets = Object.values(def.mapping ?? {});
    if (!targets.includes('item_id')) problems.push([['mapping'], `must map a source field to item_id for a ${def.format} feed`]);
    for (const [source, target] of Object.entries(def.mapping ?? {})) {
      const field = target.startsWith('item_attributes.') ? 'item_attributes' : target;
      if (!(MAPPABLE_FIELDS as readonly string[]).includes(field) || target === 'item_attributes.') {
        problems.push([['mapping', source], `'${target}' is not an Item field a feed may fill (${MAPPABLE_FIELDS.join(', ')}, item_attributes.<key>)`]);
      }
    }
  } else if (def.mapping !== undefined) {
    problems.push([['mapping'], `applies to json, xml and csv feeds; ${def.format} entries are mapped as SPEC.md's RSS table`]);
  }
  if (def.itemsPath !== undefined && def.format !== 'json' && def.format !== 'xml') problems.push([['items_path'], 'applies to json and xml feeds']);
  if (def.format === 'xml' && def.itemsPath === undefined) problems.push([['items_path'], 'is required for an xml feed (e.g. catalog.product)']);
  if (def.delimiter !== undefined && def.format !== 'csv') problems.push([['delimiter'], 'applies to csv feeds']);
  if (def.authHeader && !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(def.authHeader.name)) problems.push([['auth_header', 'name'], 'is not an HTTP header name']);
  if (def.authHeader && /[\r\n\0]/.test(def.authHeader.value)) problems.push([['auth_header', 'value'], 'must not contain line breaks']);
  return problems;
}
