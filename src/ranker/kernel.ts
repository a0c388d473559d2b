/**
 * @module ranker/kernel
 * WasmRanker: the AssemblyScript ranking kernel (build/kernel.wasm) behind the Ranker role.
 * One instance per worker. It owns the kernel's memory: setItems lays the resident item arrays
 * out once per data change and copies them in; rank() copies the request's typed arrays into the
 * request area (grown by doubling, then reused), so a ranking allocates nothing per candidate,
 * in TypeScript or in the kernel. It must not read LMDB or decide what to rank (the strategies
 * do); layout constants mirror assembly/abi.ts, whose memory map they implement:
 *
 *   arena:   [items region: one 64-byte record per item (slot, flags, type, published, ends,
 *             popularity, vector scale, i8 vector), kernel scratch, outIx, outScore — offsets
 *             from layoutOffset(FIELD_*)][request area ...]
 *   request: [header: REQ_HEADER_WORDS u32][seedWeight][seedTime][neighbourOffsets][neighbourIx]
 *            [neighbourWeight][pool][exclude][context] — each array 16-byte aligned
 *
 * Exports: abiVersion, vectorDim, arenaOffset, reserveArena(bytes), setItemCount(n),
 * layoutOffset(field), clearScratch, rank(headerOff) → k' | status, topK(scoresOff, n, k, outOff),
 * trainedTop(headerOff) (on an instance of its own: trained-kernel.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppError } from '../domain/errors.ts';
import {
  VECTOR_DIM,
  itemArraysProblem,
  quantizeVector,
  rankInputProblem,
  rankerError,
  vectorRangeCount,
  type ItemArrays,
  type ItemUpdate,
  type RankInput,
  type RankResult,
  type Ranker,
} from './reference-ranker.ts';

/** Must equal ABI_VERSION in assembly/abi.ts. */
export const ABI_VERSION = 8;
const STATUS_BAD_ARGS = -1;
const STATUS_OUT_OF_MEMORY = -2;

// layoutOffset fields (assembly/abi.ts FIELD_*).
const FIELD_ITEMS = 0;
const FIELD_OUT_IX = 6;
const FIELD_OUT_SCORE = 7;
const FIELD_REQUEST = 8;

// Item record (assembly/abi.ts ITEM_RECORD_BYTES, REC_*), in bytes.
const RECORD_BYTES = 64;
const REC_FLAGS = 4;
const REC_TYPE = 5;
const REC_PUBLISHED = 8;
const REC_ENDS = 12;
const REC_POPULARITY = 16;
const REC_VECTOR_SCALE = 20;
const REC_VECTOR = 32;

// Request header words (assembly/abi.ts REQ_*).
const REQ_K = 0;
const REQ_NOW_SEC = 1;
const REQ_ALLOWED_TYPES = 2;
const REQ_SEED_COUNT = 3;
const REQ_SEED_WEIGHT_OFF = 4;
const REQ_SEED_TIME_OFF = 5;
const REQ_NB_OFFSETS_OFF = 6;
const REQ_NB_COUNT = 7;
const REQ_NB_IX_OFF = 8;
const REQ_NB_WEIGHT_OFF = 9;
const REQ_POOL_COUNT = 10;
const REQ_POOL_OFF = 11;
const REQ_EXCLUDE_COUNT = 12;
const REQ_EXCLUDE_OFF = 13;
const REQ_CONTEXT_OFF = 14;
const REQ_SEED_HALF_LIFE = 15;
const REQ_POPULARITY_WEIGHT = 16;
const REQ_RECENCY_WEIGHT = 17;
const REQ_RECENCY_HALF_LIFE = 18;
const REQ_CONTENT_WEIGHT = 19;
const REQ_ALLOW_OFF = 20;
const REQ_HEADER_WORDS = 21;

/** First reservation of the request area: 64 KiB holds ~8,000 neighbours; it doubles beyond. */
const MIN_REQUEST_BYTES = 64 * 1024;

export interface KernelExports {
  memory: WebAssembly.Memory;
  abiVersion(): number;
  vectorDim(): number;
  arenaOffset(): number;
  reserveArena(bytes: number): number;
  setItemCount(n: number): number;
  layoutOffset(field: number): number;
  clearScratch(): void;
  rank(headerOff: number): number;
  topK(scoresOff: number, n: number, k: number, outOff: number): number;
  trainedTop(headerOff: number): number;
}

export const KERNEL_PATH = join(import.meta.dirname, '..', '..', 'build', 'kernel.wasm');

/** Compiled once per file and shared by every instance (one per worker). */
const compiled = new Map<string, WebAssembly.Module>();

/** A new instance (its own memory) of the kernel, compiled once per file. */
export function instantiateKernel(wasmPath = KERNEL_PATH): KernelExports {
  let module = compiled.get(wasmPath);
  if (!module) {
    module = new WebAssembly.Module(readFileSync(wasmPath));
    compiled.set(wasmPath, module);
  }
  return new WebAssembly.Instance(module, {
    env: {
      abort: () => {
        throw new Error('ranking kernel aborted');
      },
    },
  }).exports as unknown as KernelExports;
}

export function kernelError(status: number): AppError {
  const what = status === STATUS_OUT_OF_MEMORY ? 'out of memory' : status === STATUS_BAD_ARGS ? 'bad arguments' : `status ${status}`;
  return rankerError(`kernel returned ${what}`);
}

/** Rounds up to 16 bytes; arithmetic, not bitwise, so byte counts past 2^31 stay right. */
export const align16 = (bytes: number) => Math.ceil(bytes / 16) * 16;

export class WasmRanker implements Ranker {
  #exports: KernelExports;
  #arena: number;
  // Views on the whole memory, re-created when memory.grow replaces its buffer.
  #buffer: ArrayBuffer | undefined;
  #u8 = new Uint8Array(0);
  #i8 = new Int8Array(0);
  #u32 = new Uint32Array(0);
  #f32 = new Float32Array(0);
  #itemCount = 0;
  /** Byte offset of the item records. */
  #itemsOff = 0;
  #requestOff: number;
  #requestCapacity = 0;
  /** Next free byte of the request area while rank() copies its arrays in. */
  #cursor = 0;
  #outIxWord = 0;
  #outScoreWord = 0;

  constructor(wasmPath = KERNEL_PATH) {
    this.#exports = instantiateKernel(wasmPath);
    const version = this.#exports.abiVersion();
    if (version !== ABI_VERSION) throw new Error(`kernel ABI ${version}, expected ${ABI_VERSION}: rebuild with npm run build`);
    if (this.#exports.vectorDim() !== VECTOR_DIM) throw new Error(`kernel vectors have ${this.#exports.vectorDim()} dims, expected ${VECTOR_DIM}`);
    this.#arena = this.#exports.arenaOffset() >>> 0;
    this.#requestOff = this.#offset(FIELD_REQUEST);
    this.#refreshViews();
  }

  setItems(items: ItemArrays): void {
    this.#layItems(items, 0);
  }

  /**
   * The kernel's items region starts at the arena's first byte whatever n (layout.ts), and a new
   * layout only resets each record's slot: the records below the count held stay as written.
   */
  growItems(items: ItemArrays, held: number): void {
    this.#layItems(items, items.flags.length >= this.#itemCount ? Math.max(0, Math.min(held, this.#itemCount)) : 0);
  }

  /** Lays the kernel out for the arrays' n items and writes the records from `from` on. */
  #layItems(items: ItemArrays, from: number): void {
    const problem = itemArraysProblem(items);
    if (problem) throw rankerError(problem);
    const n = items.flags.length;
    const status = this.#exports.setItemCount(n);
    if (status !== 0) throw kernelError(status);
    const at = (field: number) => this.#offset(field);
    this.#itemCount = n;
    this.#requestOff = at(FIELD_REQUEST);
    this.#requestCapacity = 0; // the request area moved: reserve it again on the next call
    this.#outIxWord = at(FIELD_OUT_IX) >>> 2;
    this.#outScoreWord = at(FIELD_OUT_SCORE) >>> 2;
    this.#refreshViews();
    this.#itemsOff = at(FIELD_ITEMS);
    const vectors = items.vectors && items.vectors.length > 0 ? items.vectors : undefined;
    for (let ix = from; ix < n; ix++) {
      // An ix not in the catalog (the view's headroom: a fifth of a grown layout) is never a
      // candidate the kernel scores, so its vector is not quantized: zeros, as for no vector.
      const flags = items.flags[ix]!;
      this.#writeState(ix, flags, items.type[ix]!, items.published[ix]!, items.ends[ix]!);
      this.#writeVector(ix, flags === 0 ? undefined : vectors, ix * VECTOR_DIM);
      this.#f32[(this.#itemsOff + ix * RECORD_BYTES + REC_POPULARITY) >>> 2] = items.popularity[ix]!;
    }
  }

  /** An item record's state (its vector, slot and popularity are written apart). */
  #writeState(ix: number, flags: number, type: number, published: number, ends: number): void {
    const record = this.#itemsOff + ix * RECORD_BYTES;
    this.#u8[record + REC_FLAGS] = flags;
    this.#u8[record + REC_TYPE] = type;
    this.#u32[(record + REC_PUBLISHED) >>> 2] = published;
    this.#u32[(record + REC_ENDS) >>> 2] = ends;
  }

  /** The record's vector quantised from `vectors[at ...]`, or zeros for none. */
  #writeVector(ix: number, vectors: ArrayLike<number> | undefined, at: number): void {
    const record = this.#itemsOff + ix * RECORD_BYTES;
    this.#f32[(record + REC_VECTOR_SCALE) >>> 2] = vectors ? quantizeVector(vectors, at, this.#i8, record + REC_VECTOR) : 0;
    if (!vectors) this.#i8.fill(0, record + REC_VECTOR, record + REC_VECTOR + VECTOR_DIM);
  }

  updateItem(ix: number, item: ItemUpdate): void {
    if (!Number.isInteger(ix) || ix < 0 || ix >= this.#itemCount) throw rankerError(`item ${ix} is outside the ${this.#itemCount} items held`);
    if (item.vector && item.vector.length !== VECTOR_DIM) throw rankerError(`vector has ${item.vector.length} dims, not ${VECTOR_DIM}`);
    this.#writeState(ix, item.flags, item.type, item.published, item.ends);
    if (item.vector !== undefined) this.#writeVector(ix, item.vector ?? undefined, 0);
  }

  setVectors(first: number, vectors: Float32Array): void {
    const count = vectorRangeCount(first, vectors, this.#itemCount);
    for (let i = 0; i < count; i++) this.#writeVector(first + i, vectors, i * VECTOR_DIM);
  }

  addVector(ix: number, weight: number, out: Float32Array): void {
    if (!(ix < this.#itemCount)) return;
    const record = this.#itemsOff + ix * RECORD_BYTES;
    const factor = Math.fround(weight * this.#f32[(record + REC_VECTOR_SCALE) >>> 2]!);
    const q = this.#i8;
    const at = record + REC_VECTOR;
    for (let d = 0; d < VECTOR_DIM; d++) out[d] = Math.fround(out[d]! + Math.fround(factor * q[at + d]!));
  }

  setPopularity(popularity: Float32Array): void {
    if (popularity.length !== this.#itemCount) throw rankerError(`popularity has ${popularity.length} values for ${this.#itemCount} items`);
    const word = (this.#itemsOff + REC_POPULARITY) >>> 2;
    for (let ix = 0; ix < popularity.length; ix++) this.#f32[word + ix * (RECORD_BYTES >>> 2)] = popularity[ix]!;
  }

  rank(input: RankInput): RankResult {
    const problem = rankInputProblem(input, this.#itemCount);
    if (problem) throw rankerError(problem);
    const m = input.seedWeight.length;
    const t = input.neighbourIx.length;
    const p = input.pool.length;
    const e = input.exclude.length;
    const a = input.allow?.length ?? 0;
    const bytes =
      align16(REQ_HEADER_WORDS * 4) + 2 * align16(m * 4) + align16((m + 1) * 4) + 2 * align16(t * 4) + align16(p * 4) + align16(e * 4) + VECTOR_DIM * 4 + align16(a * 4);
    this.#reserveRequest(bytes);

    const u32 = this.#u32;
    const f32 = this.#f32;
    const header = this.#requestOff >>> 2;
    this.#cursor = this.#requestOff + align16(REQ_HEADER_WORDS * 4);
    u32[header + REQ_K] = input.k;
    u32[header + REQ_NOW_SEC] = input.nowSec;
    u32[header + REQ_ALLOWED_TYPES] = input.allowedTypesMask;
    u32[header + REQ_SEED_COUNT] = m;
    u32[header + REQ_SEED_WEIGHT_OFF] = this.#put(f32, input.seedWeight);
    u32[header + REQ_SEED_TIME_OFF] = this.#put(u32, input.seedTime);
    u32[header + REQ_NB_OFFSETS_OFF] = this.#put(u32, input.neighbourOffsets);
    u32[header + REQ_NB_COUNT] = t;
    u32[header + REQ_NB_IX_OFF] = this.#put(u32, input.neighbourIx);
    u32[header + REQ_NB_WEIGHT_OFF] = this.#put(f32, input.neighbourWeight);
    u32[header + REQ_POOL_COUNT] = p;
    u32[header + REQ_POOL_OFF] = this.#put(u32, input.pool);
    u32[header + REQ_EXCLUDE_COUNT] = e;
    u32[header + REQ_EXCLUDE_OFF] = this.#put(u32, input.exclude);
    u32[header + REQ_CONTEXT_OFF] = input.context === null ? 0 : this.#put(f32, input.context);
    u32[header + REQ_ALLOW_OFF] = input.allow ? this.#put(u32, input.allow) : 0;
    f32[header + REQ_SEED_HALF_LIFE] = input.seedHalfLifeSec;
    f32[header + REQ_POPULARITY_WEIGHT] = input.popularityWeight;
    f32[header + REQ_RECENCY_WEIGHT] = input.recencyWeight;
    f32[header + REQ_RECENCY_HALF_LIFE] = input.recencyHalfLifeSec;
    f32[header + REQ_CONTENT_WEIGHT] = input.contentWeight;

    let count: number;
    try {
      count = this.#exports.rank(this.#requestOff);
    } catch (cause) {
      throw this.#trapped(cause);
    }
    if (count < 0) throw kernelError(count);
    return {
      ix: u32.subarray(this.#outIxWord, this.#outIxWord + count),
      score: f32.subarray(this.#outScoreWord, this.#outScoreWord + count),
    };
  }

  /** A view on kernel memory with room for `n` scores; write candidates' scores into it. */
  scoresBuffer(n: number): Float32Array {
    this.#reserveRequest(align16(n * 4) * 2);
    return this.#f32.subarray(this.#requestOff >>> 2, (this.#requestOff >>> 2) + n);
  }

  /** Indices of the `k` best of the first `n` scores, best first; valid until the next call. */
  selectTopK(n: number, k: number): Uint32Array {
    this.#reserveRequest(align16(n * 4) * 2);
    const outOff = this.#requestOff + align16(n * 4);
    let count: number;
    try {
      count = this.#exports.topK(this.#requestOff, n, Math.min(k, n), outOff);
    } catch (cause) {
      throw this.#trapped(cause);
    }
    if (count < 0) throw kernelError(count);
    return this.#u32.subarray(outOff >>> 2, (outOff >>> 2) + count);
  }

  /** Copies `source` to the request cursor (a memcpy: same element type) and returns its offset. */
  #put(target: Uint32Array | Float32Array, source: Uint32Array | Float32Array): number {
    const off = this.#cursor;
    target.set(source, off >>> 2);
    this.#cursor = off + align16(source.length * 4);
    return off;
  }

  /**
   * The error for a trap inside the kernel (its entry checks should make one impossible): the
   * scratch may be half reset, so it is cleared first and the instance stays usable.
   */
  #trapped(cause: unknown): AppError {
    this.#exports.clearScratch();
    return rankerError('kernel trapped', cause);
  }

  /** Makes the request area hold `bytes`, doubling it so growth is rare and amortised. */
  #reserveRequest(bytes: number): void {
    if (bytes <= this.#requestCapacity) return;
    const capacity = Math.max(bytes, this.#requestCapacity * 2, MIN_REQUEST_BYTES);
    const status = this.#exports.reserveArena(this.#requestOff - this.#arena + capacity);
    if (status !== 0) throw kernelError(status);
    this.#requestCapacity = capacity;
    this.#refreshViews();
  }

  /** layoutOffset as an unsigned number (wasm i32 results reach JS signed; offsets pass 2^31 past ~12M items). */
  #offset(field: number): number {
    return this.#exports.layoutOffset(field) >>> 0;
  }

  #refreshViews(): void {
    const buffer = this.#exports.memory.buffer;
    if (buffer === this.#buffer) return;
    this.#buffer = buffer;
    this.#u8 = new Uint8Array(buffer);
    this.#i8 = new Int8Array(buffer);
    this.#u32 = new Uint32Array(buffer);
    this.#f32 = new Float32Array(buffer);
  }
}
