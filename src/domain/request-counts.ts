/**
 * @module domain/request-counts
 * What the main thread's request counter (main-thread/request-counter.ts) posts to the model
 * builder, which writes it (builder/request-counts.ts): plain data, the message of that hop.
 */

/** One environment's counts of one UTC hour. */
export interface HourTotals {
  environment: string;
  startMs: number;
  /** [`dimension\u0000value\u0000requests`, n]. */
  counts: Array<[string, number]>;
  /** Requests per latency bucket (domain/latency-buckets.ts). */
  latency: number[];
}

/** A day's per-item counts: ix in any order, each once, and its count alongside. */
export interface ItemTotals {
  environment: string;
  day: string;
  ix: Uint32Array;
  counts: Uint32Array;
}

/** What the main thread posts to the builder (ix and counts buffers transferred). */
export interface RequestCounts {
  type: 'requestCounts';
  hours: HourTotals[];
  items: ItemTotals[];
}
