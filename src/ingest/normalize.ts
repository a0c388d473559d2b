/**
 * @module ingest/normalize
 * Where feed and file words (entry, row, element) stop: a candidate record shaped like the Item
 * wire body becomes an Item through the same validation as the Items API (parseItemBody, and the
 * environment's item types), or a one-line reason to report. Also the value coercions that
 * mapped feeds and file rows share (timestamps in the forms feeds use, strings out of numbers).
 * Imports domain/item-schema.ts on purpose: every channel validates with that one schema.
 */
import type { Item } from '../domain/item.ts';
import { parseItemBody } from '../domain/item-schema.ts';
import { fieldErrorsText } from '../domain/field-errors.ts';

/** An Item-shaped plain object, not yet validated. */
export type Candidate = Record<string, unknown>;

/** Validates `candidate` as an Item of `environment` whose type is one of `itemTypes`. */
export function toItem(candidate: Candidate, environment: string, itemTypes: readonly string[]): { item: Item } | { reason: string } {
  const parsed = parseItemBody(candidate);
  if ('errors' in parsed) return { reason: fieldErrorsText(parsed.errors) };
  const { item } = parsed;
  if (item.environment !== environment) return { reason: `environment '${item.environment}' is not '${environment}'` };
  if (!itemTypes.includes(item.item_type)) {
    return { reason: `item_type '${item.item_type}' is not an item type of environment '${environment}' (${itemTypes.join(', ')})` };
  }
  return { item };
}

/** RFC 3339 with an offset or Z: already what the Item schema wants. */
const RFC3339_ZONED = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})$/;
/** ISO 8601 date-time without a zone: local time of an unknown place (SPEC.md rule 1 refuses it). */
const ISO_UNZONED = /^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$/;
/** RFC 822/1123 (RSS pubDate) and similar: the zone is the last token. */
const TRAILING_ZONE = /(\b(GMT|UTC?|[ECMP][SD]T|[A-IK-Z])|[+-]\d{4}|[+-]\d{2}:\d{2})\s*$/i;

/**
 * A timestamp as the Item schema wants it (ISO 8601 with offset or Z), from RFC 3339, RFC 822
 * (RSS), or unix time in seconds or milliseconds. Returns `{ reason }` for a value without a
 * timezone or not a date at all.
 */
export function toTimestamp(value: unknown): { iso: string } | { reason: string } {
  if (typeof value === 'number' && Number.isFinite(value)) {
    // Below 1e11 a number is seconds (up to year 5138), else milliseconds.
    const ms = Math.abs(value) < 1e11 ? value * 1000 : value;
    const date = new Date(ms);
    return Number.isNaN(date.getTime()) ? { reason: `${value} is not a unix time` } : { iso: date.toISOString() };
  }
  if (typeof value !== 'string') return { reason: 'is not a timestamp' };
  const text = value.trim();
  if (/^\d{9,13}$/.test(text)) return toTimestamp(Number(text));
  if (RFC3339_ZONED.test(text)) {
    const normalised = text.replace(' ', 'T');
    return Number.isNaN(Date.parse(normalised)) ? { reason: `'${text}' is not a date` } : { iso: normalised.replace(/([+-]\d{2})(\d{2})$/, '$1:$2') };
  }
  if (ISO_UNZONED.test(text)) return { reason: `'${text}' has no timezone offset` };
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return { reason: `'${text.slice(0, 64)}' is not a date` };
  if (!TRAILING_ZONE.test(text)) return { reason: `'${text.slice(0, 64)}' has no timezone` };
  return { iso: new Date(ms).toISOString() };
}

/** A scalar as a string (numbers and booleans written out); undefined for anything else. */
export function asText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return String(value);
  return undefined;
}
