/**
 * @module http/schemas/feed
 * The feed resource on the wire (snake_case): the compiled schema of a definition body (POST and
 * PUT, also used by the CLI), its checks beyond JSON Schema (domain/feed.ts), and the response
 * shape with the poll status. The authentication header's value is never sent back: responses
 * show REDACTED, and a PUT carrying REDACTED keeps the stored value (so a GET, edit, PUT round
 * trip does not overwrite the secret with the placeholder).
 */
import type { AllowList } from '../../outbound/allow-list.ts';
import { literalRefusal } from '../../outbound/guard.ts';
import { Ajv } from 'ajv';
import { FEED_FORMATS, feedDefinitionProblems, formatInterval, parseInterval, DEFAULT_INTERVAL_SEC, type FeedDefinition, type FeedStatus } from '../../domain/feed.ts';
import type { FieldError } from '../../domain/errors.ts';
import { ajvFieldErrors, pointer } from '../../domain/field-errors.ts';

export const REDACTED = '(hidden)';

const TEXT = { type: 'string', minLength: 1, maxLength: 1024 } as const;

/** The feed definition body schema (also the fuzz test's starting point). */
export const FEED_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['url', 'format', 'item_type'],
  properties: {
    feed_id: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' },
    url: { type: 'string', minLength: 1, maxLength: 8192 },
    format: { enum: FEED_FORMATS },
    item_type: { type: 'string', minLength: 1, maxLength: 256 },
    interval: { type: 'string', maxLength: 16 },
    auth_header: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['name', 'value'],
      properties: { name: TEXT, value: { type: 'string', maxLength: 8192 } },
    },
    disable_marker: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['field', 'value'],
      properties: { field: TEXT, value: { type: 'string', maxLength: 1024 } },
    },
    items_path: { type: ['string', 'null'], minLength: 1, maxLength: 1024 },
    mapping: { type: ['object', 'null'], minProperties: 1, maxProperties: 200, propertyNames: { minLength: 1, maxLength: 1024 }, additionalProperties: TEXT },
    delimiter: { type: ['string', 'null'], minLength: 1, maxLength: 4 },
  },
} as const;

const validateBody = new Ajv({ allErrors: true, strict: true }).compile(FEED_BODY);

interface FeedBody {
  feed_id?: string;
  url: string;
  format: FeedDefinition['format'];
  item_type: string;
  interval?: string;
  auth_header?: { name: string; value: string } | null;
  disable_marker?: { field: string; value: string } | null;
  items_path?: string | null;
  mapping?: Record<string, string> | null;
  delimiter?: string | null;
}

/**
 * Checks a definition body; returns the definition (without source and times) or the failing
 * fields. `allow` is the environment's outbound allow list: a URL whose literal host it refuses
 * (an internal address, `localhost`) is an error here, so it is never stored nor fetched.
 * `existing` is the stored definition a PUT replaces (for a REDACTED header value).
 */
export function parseFeedBody(
  body: unknown,
  environment: string,
  feedId: string | undefined,
  itemTypes: readonly string[],
  allow: AllowList,
  existing?: FeedDefinition,
): { feed: Omit<FeedDefinition, 'source' | 'createdAt' | 'updatedAt'>; feedIdGiven: boolean } | { errors: FieldError[] } {
  if (!validateBody(body)) return { errors: ajvFieldErrors(validateBody.errors ?? [], { notAField: 'is not a field of a feed', noShape: 'has the wrong type' }) };
  const b = body as FeedBody;
  const errors: FieldError[] = [];
  if (feedId !== undefined && b.feed_id !== undefined && b.feed_id !== feedId) {
    errors.push({ path: '/feed_id', message: `'${b.feed_id}' differs from the path's '${feedId}'` });
  }
  let intervalSec = DEFAULT_INTERVAL_SEC;
  if (b.interval !== undefined) {
    const parsed = parseInterval(b.interval);
    if (parsed === undefined) errors.push({ path: '/interval', message: 'must be a duration from 1s to 30d such as 90s, 15m, 1h or 1d' });
    else intervalSec = parsed;
  }
  const feed: Omit<FeedDefinition, 'source' | 'createdAt' | 'updatedAt'> = {
    feedId: feedId ?? b.feed_id ?? '',
    environment,
    url: b.url,
    format: b.format,
    itemType: b.item_type,
    intervalSec,
  };
  if (b.auth_header) {
    const keep = b.auth_header.value === REDACTED && existing?.authHeader?.name === b.auth_header.name;
    feed.authHeader = { name: b.auth_header.name, value: keep ? existing!.authHeader!.value : b.auth_header.value };
  }
  if (b.disable_marker) feed.disableMarker = { ...b.disable_marker };
  if (b.items_path) feed.itemsPath = b.items_path;
  if (b.mapping) feed.mapping = { ...b.mapping };
  if (b.delimiter) feed.delimiter = b.delimiter;
  for (const [field, message] of feedDefinitionProblems(feed, itemTypes)) errors.push({ path: pointer(...field), message });
  const refusal = errors.some((e) => e.path === '/url') ? undefined : literalRefusal(feed.url, allow);
  if (refusal) errors.push({ path: '/url', message: `${refusal}: not allowed for outbound fetches (see outbound.allow in the configuration)` });
  if (errors.length > 0) return { errors };
  return { feed, feedIdGiven: b.feed_id !== undefined };
}

function statusToWire(status: FeedStatus | undefined): Record<string, unknown> {
  if (!status) return { state: 'never_polled', polls: 0 };
  return {
    state: status.outcome ?? 'never_polled',
    polls: status.polls,
    last_poll_at: status.lastPollAt ?? null,
    last_success_at: status.lastSuccessAt ?? null,
    next_poll_at: status.nextPollAt !== undefined ? new Date(status.nextPollAt).toISOString() : null,
    http_status: status.httpStatus ?? null,
    detected_format: status.detectedFormat ?? null,
    encoding: status.encoding ?? null,
    entries_seen: status.entriesSeen,
    entries_applied: status.entriesApplied,
    entries_unchanged: status.entriesUnchanged,
    entries_rejected: status.entriesRejected,
    created: status.created,
    updated: status.updated,
    enabled: status.enabled,
    disabled: status.disabled,
    rejected_entries: status.rejected.map((r) => ({ entry: r.entry, item_id: r.itemId ?? null, reason: r.reason })),
    last_error: status.lastError ?? null,
    consecutive_failures: status.consecutiveFailures,
    duration_ms: status.durationMs ?? null,
    warnings: status.warnings,
  };
}

/** The feed as the API and the CLI show it. */
export function feedToWire(def: FeedDefinition, status: FeedStatus | undefined): Record<string, unknown> {
  return {
    feed_id: def.feedId,
    environment: def.environment,
    url: def.url,
    format: def.format,
    item_type: def.itemType,
    interval: formatInterval(def.intervalSec),
    auth_header: def.authHeader ? { name: def.authHeader.name, value: REDACTED } : null,
    disable_marker: def.disableMarker ?? null,
    items_path: def.itemsPath ?? null,
    mapping: def.mapping ?? null,
    delimiter: def.delimiter ?? null,
    source: def.source,
    created_at: def.createdAt,
    updated_at: def.updatedAt,
    status: statusToWire(status),
  };
}
