/**
 * @module store/report-reader
 * Range reads of the reporting counters (store/report-keys.ts) for the report routes: counters
 * per period, dimension and value; the summed latency histogram; coverage (items recommended
 * over the range against the enabled catalog); the most recommended and most clicked items.
 * Reads only, synchronous (lmdb-js reads are), each one range read over the days asked.
 */
import { LATENCY_BUCKETS } from '../domain/latency-buckets.ts';
import { copyU32, ITEM_ENABLED, ITEM_IN_CATALOG, itemLayoutKey } from './model-layout.ts';
import type { Store } from './open.ts';
import { chunkStart, COUNT_CHUNK_ITEMS, COVERAGE_CHUNK_ITEMS, type Rollup } from './report-keys.ts';

export interface CounterRow {
  /** `YYYY-MM-DD`, or `YYYY-MM-DDTHH` for hourly counters. */
  period: string;
  dimension: string;
  value: string;
  metrics: Record<string, number>;
}

/** Counter rows of the days `from`..`to` (inclusive), per day or per hour, optionally of one dimension. */
export function readCounterRows(store: Store, env: string, granularity: 'day' | 'hour', from: string, to: string, dimension?: string): CounterRow[] {
  const tag = granularity === 'day' ? 'd' : 'h';
  const rows = new Map<string, CounterRow>();
  for (const { key, value } of store.reportState.getRange({ start: [env, 'repr', tag, from], end: [env, 'repr', tag, `${to}\uffff`] })) {
    const period = (key as string[])[3]!;
    for (const [id, metrics] of Object.entries(value as Rollup)) {
      const cut = id.indexOf('\u0000');
      const dim = id.slice(0, cut);
      if (dimension !== undefined && dim !== dimension) continue;
      const rowId = `${period}\u0000${id}`;
      let row = rows.get(rowId);
      if (!row) rows.set(rowId, (row = { period, dimension: dim, value: id.slice(cut + 1), metrics: {} }));
      for (const metric in metrics) row.metrics[metric] = (row.metrics[metric] ?? 0) + metrics[metric]!;
    }
  }
  return [...rows.values()];
}

/** The recommendation latency histogram summed over the days. */
export function readLatency(store: Store, env: string, from: string, to: string): number[] {
  const sum = new Array<number>(LATENCY_BUCKETS).fill(0);
  for (const { value } of store.reportState.getRange({ start: [env, 'replat', 'd', from], end: [env, 'replat', 'd', `${to}\uffff`] })) {
    const histogram = value as number[];
    for (let i = 0; i < sum.length; i++) sum[i]! += histogram[i] ?? 0;
  }
  return sum;
}

function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24);
}

/** Distinct items recommended over the days, and the enabled items of the catalog now. */
export function readCoverage(store: Store, env: string, from: string, to: string): { recommended: number; catalog: number } {
  let union = new Uint32Array(0);
  for (const { key, value } of store.reportState.getRange({ start: [env, 'repc', from], end: [env, 'repc', `${to}\uffff`] })) {
    const bytes = value as Uint8Array;
    // A word view needs an aligned offset: msgpack hands out slices of its read buffer.
    let aligned = bytes;
    if (bytes.byteOffset % 4 !== 0 || bytes.length % 4 !== 0) {
      aligned = new Uint8Array(Math.ceil(bytes.length / 4) * 4);
      aligned.set(bytes);
    }
    const words = new Uint32Array(aligned.buffer, aligned.byteOffset, aligned.length / 4);
    const at = chunkStart(key, COVERAGE_CHUNK_ITEMS) >> 5;
    if (at + words.length > union.length) {
      const grown = new Uint32Array(Math.max(at + words.length, union.length * 2));
      grown.set(union);
      union = grown;
    }
    for (let i = 0; i < words.length; i++) union[at + i]! |= words[i]!;
  }
  let recommended = 0;
  for (let i = 0; i < union.length; i++) recommended += popcount32(union[i]!);
  const flags = store.model.get(itemLayoutKey(env, 'flags'));
  let catalog = 0;
  const wanted = ITEM_IN_CATALOG | ITEM_ENABLED;
  if (flags) for (let i = 0; i < flags.length; i++) if ((flags[i]! & wanted) === wanted) catalog++;
  return { recommended, catalog };
}

interface ItemCount {
  item_type: string;
  item_id: string;
  count: number;
}

/** The `limit` items most recommended or most clicked over the days, most first (ties by index). */
export function readTopItems(store: Store, env: string, kind: 'recommended' | 'clicked', from: string, to: string, limit: number): ItemCount[] {
  const counts = new Map<number, number>();
  const addChunks = (tag: 'repn' | 'repk') => {
    for (const { key, value } of store.reportState.getRange({ start: [env, tag, from], end: [env, tag, `${to}\uffff`] })) {
      const perIx = copyU32(value as Uint8Array);
      const first = chunkStart(key, COUNT_CHUNK_ITEMS);
      for (let i = 0; i < perIx.length; i++) if (perIx[i]! > 0) counts.set(first + i, (counts.get(first + i) ?? 0) + perIx[i]!);
    }
  };
  // One range read over the days per record form: [env, 'repn' or 'repk', day, chunk] per-ix chunks,
  // and clicks written a record per item before chunks, [env, 'repi', day, 'clicked', ix].
  if (kind === 'recommended') addChunks('repn');
  else {
    addChunks('repk');
    for (const { key, value } of store.reportState.getRange({ start: [env, 'repi', from], end: [env, 'repi', `${to}\uffff`] })) {
      const [, , , keyKind, ix] = key as [string, string, string, string, number];
      if (keyKind === kind) counts.set(ix, (counts.get(ix) ?? 0) + (value as number));
    }
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, limit)
    .flatMap(([ix, count]) => {
      const id = store.indexItems.get([env, ix]);
      return id ? [{ item_type: id[0], item_id: id[1], count }] : [];
    });
}
