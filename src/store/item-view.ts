/**
 * @module store/item-view
 * What a ranking worker's catalog view holds of each item (serving/catalog-view.ts), saved by
 * the model builder by chunk of ITEM_VIEW_CHUNK_ITEMS ix, so a worker starts from these records
 * instead of decoding every whole item: at 1,000,000 items the item scan was ~5 s of a worker's
 * ~10 s start (LMDB iteration, msgpack decode of descriptions and everything else, their GC).
 * Records are current as of the builder's change-feed position (written in the same transaction),
 * and a worker replays the feed after it, as for the content vectors.
 *
 * | key (model-state)      | value                                                                  |
 * |------------------------|------------------------------------------------------------------------|
 * | [env, 'iv', chunk]     | { s: strings of the chunk (types, filter keys), e: per ix of the chunk: null, or [id, s-index of type, enabled 0/1, published, ends, s-indices of filter keys, information values] } |
 * | [env, 'ivf']           | The fingerprint the records were made with (itemViewFingerprint); absent: not made yet |
 * | [env, 'ivp']           | While the builder makes every record: { fingerprint, next ix } (a later start goes on from it) |
 *
 * A fingerprint differing from the configuration's (filter attributes or information fields
 * changed, or this format) means the records do not hold what the view needs: the worker scans
 * the items, and the builder remakes the records at its next start.
 */
import type { EnvironmentConfig } from '../config/types.ts';
import { informationOf, unixSecOf, type StoredItem } from '../domain/item.ts';
import { filterKeysOf } from '../domain/list-filters.ts';

/** Bump when filterKeysOf, informationOf or the record layout change: old records are then remade. */
const FORMAT = 1;
/** Items per record: ~1 KB, within a leaf page (an item's write rewrites one page). */
export const ITEM_VIEW_CHUNK_ITEMS = 16;
export const itemViewChunkKey = (env: string, chunk: number) => [env, 'iv', chunk];
export const itemViewFingerprintKey = (env: string) => [env, 'ivf'];
/** How far the builder got making every record (its fingerprint and the next ix), while it does. */
export const itemViewProgressKey = (env: string) => [env, 'ivp'];

/** One item as the view holds it. */
export interface ItemViewEntry {
  id: string;
  type: string;
  enabled: boolean;
  published: number;
  ends: number;
  keys: string[];
  /** By field of infoFieldsOf(config). */
  info: Array<string | undefined>;
}

/** One stored tuple: [id, type, enabled, published, ends, keys, info] with strings by index into `s`. */
export type StoredEntry = [string, number, 0 | 1, number, number, number[], Array<string | null>];
export interface StoredChunk {
  s: string[];
  e: Array<StoredEntry | null>;
}

/** The information fields the environment's lists show, in a stable order. */
export function infoFieldsOf(config: EnvironmentConfig): string[] {
  return [...new Set(Object.values(config.lists).flatMap((l) => (l.informationField ? [l.informationField] : [])))].sort();
}

export function itemViewFingerprint(config: EnvironmentConfig): string {
  return JSON.stringify({ format: FORMAT, filterAttributes: config.filterAttributes, infoFields: infoFieldsOf(config) });
}

export function itemViewEntry(stored: StoredItem, config: EnvironmentConfig, infoFields: readonly string[]): ItemViewEntry {
  const item = stored.item;
  return {
    id: item.item_id,
    type: item.item_type,
    enabled: stored.enabled,
    published: unixSecOf(item.publication_datetime),
    ends: unixSecOf(item.end_datetime),
    keys: filterKeysOf(item, config.filterAttributes),
    info: infoFields.map((field) => informationOf(item, field)),
  };
}

/** A chunk's entries as stored; undefined when it has none (the record is removed). */
export function encodeChunk(entries: ReadonlyArray<ItemViewEntry | null | undefined>): StoredChunk | undefined {
  const strings: string[] = [];
  const at = new Map<string, number>();
  const ref = (s: string) => {
    let i = at.get(s);
    if (i === undefined) at.set(s, (i = strings.push(s) - 1));
    return i;
  };
  let any = false;
  const e = entries.map((entry): StoredEntry | null => {
    if (!entry) return null;
    any = true;
    return [entry.id, ref(entry.type), entry.enabled ? 1 : 0, entry.published, entry.ends, entry.keys.map(ref), entry.info.map((v) => v ?? null)];
  });
  return any ? { s: strings, e } : undefined;
}

/** A stored chunk's entries (ITEM_VIEW_CHUNK_ITEMS of them, null where none); empty when malformed. */
export function decodeChunk(chunk: unknown): Array<ItemViewEntry | null> {
  const out: Array<ItemViewEntry | null> = new Array(ITEM_VIEW_CHUNK_ITEMS).fill(null);
  if (!isStoredChunk(chunk)) return out;
  const s = chunk.s;
  chunk.e.forEach((t, i) => {
    if (isStoredEntry(t) && i < ITEM_VIEW_CHUNK_ITEMS) {
      out[i] = { id: t[0], type: s[t[1]]!, enabled: t[2] === 1, published: t[3], ends: t[4], keys: t[5].map((k) => s[k]!), info: t[6].map((v) => v ?? undefined) };
    }
  });
  return out;
}

/** Shape check of a record (a store is data from disk: a malformed one is skipped, never thrown on). */
export function isStoredChunk(value: unknown): value is StoredChunk {
  const chunk = value as StoredChunk | undefined;
  return !!chunk && Array.isArray(chunk.s) && Array.isArray(chunk.e);
}

/** Shape check of one item's tuple in a record (null, or malformed: no item). */
export function isStoredEntry(t: unknown): t is StoredEntry {
  return Array.isArray(t) && t.length === 7 && typeof t[0] === 'string' && typeof t[1] === 'number' && typeof t[3] === 'number' && typeof t[4] === 'number' && Array.isArray(t[5]) && Array.isArray(t[6]);
}
