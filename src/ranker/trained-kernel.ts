/**
 * @module ranker/trained-kernel
 * The host side of the kernel's trainedTop (assembly/trained.ts): one kernel instance per
 * environment whose memory holds a trained model version's rows as they are read, and sums a
 * user's scores there. Summing ~3,000 weights into a hash table and keeping the best 50 cost a
 * ranking worker ~40 µs per request in TypeScript (a third of the engine at 100,000 items), ~28
 * µs in the kernel with a hash table of the columns touched, ~15–20 µs with dense per-column sums
 * (84,000 columns, 20 seeds of 200 entries: a load and a store in 670 KB per weight instead of
 * a hashed probe). Memory from arenaOffset(), all laid out here:
 *
 *   [items: u32 per model column][arena: (column u32, weight f32) per row entry][scratch]
 *   scratch: [sums: (stamp u32, slot u32) per column][used: (column u32, sum f32) per slot]
 *            [seeds][exclude][out ix][out score][header]
 *
 * A column's slot is live in a call when its stamp is the call's epoch, so nothing is cleared
 * between calls; its sum is in the used list (the selection then reads that list in order). The
 * arena grows by doubling; the scratch moves past it and is zeroed again (no stamp is then live).
 * It must not read LMDB (trained-scores.ts does).
 */
import { ABI_VERSION, align16, instantiateKernel, kernelError, type KernelExports } from './kernel.ts';
import { rankerError } from './reference-ranker.ts';

// TrainedTop header words (assembly/abi.ts TRAINED_*).
const SEED_COUNT = 0;
const SEEDS_OFF = 1;
const ARENA_OFF = 2;
const ARENA_COUNT = 3;
const SUMS_OFF = 4;
const EPOCH = 5;
const USED_OFF = 6;
const EXCLUDE_COUNT = 7;
const EXCLUDE_OFF = 8;
const ITEMS_OFF = 9;
const COLUMNS = 10;
const CATALOG_SIZE = 11;
const MAX = 12;
const OUT_IX_OFF = 13;
const OUT_SCORE_OFF = 14;
const HEADER_WORDS = 15;

const FIRST_ARENA_ENTRIES = 1 << 16;

/** Capacities of the scratch regions, in elements. */
interface Scratch {
  columns: number;
  used: number;
  seeds: number;
  exclude: number;
  out: number;
}

/** Byte offsets of the scratch regions, in the order of the memory map; `end` is past the header. */
interface Regions {
  sums: number;
  used: number;
  seeds: number;
  exclude: number;
  outIx: number;
  outScore: number;
  header: number;
  end: number;
}

function regionsAt(at: number, s: Scratch): Regions {
  const sums = at;
  const used = sums + 8 * s.columns;
  const seeds = used + align16(8 * s.used);
  const exclude = seeds + align16(12 * s.seeds);
  const outIx = exclude + align16(4 * s.exclude);
  const outScore = outIx + align16(4 * s.out);
  const header = outScore + align16(4 * s.out);
  return { sums, used, seeds, exclude, outIx, outScore, header, end: header + align16(4 * HEADER_WORDS) };
}

export class TrainedKernel {
  readonly #exports: KernelExports;
  readonly #base: number;
  #buffer: ArrayBuffer | undefined;
  #u32 = new Uint32Array(0);
  #f32 = new Float32Array(0);
  #u8 = new Uint8Array(0);
  #columns = 0;
  #arenaOff = 0;
  #arenaCapacity = 0;
  #arenaUsed = 0;
  #scratch: Scratch = { columns: 0, used: 0, seeds: 0, exclude: 0, out: 0 };
  /** The last call's stamp; 0 is never one (zeroed memory). */
  #epoch = 0;
  #regions: Regions = regionsAt(0, this.#scratch);

  constructor() {
    this.#exports = instantiateKernel();
    if (this.#exports.abiVersion() !== ABI_VERSION) throw new Error(`kernel ABI ${this.#exports.abiVersion()}, expected ${ABI_VERSION}: rebuild with npm run build`);
    this.#base = this.#exports.arenaOffset() >>> 0;
    this.reset(new Uint32Array(0));
  }

  /** A new model version: its columns' item ix; the arena empties. */
  reset(items: Uint32Array): void {
    this.#columns = items.length;
    this.#arenaOff = this.#base + align16(items.length * 4);
    this.#arenaCapacity = 0;
    this.#arenaUsed = 0;
    this.#layout(FIRST_ARENA_ENTRIES, { ...this.#scratch, columns: items.length });
    this.#u32.set(items, this.#base >>> 2);
  }

  /** Appends a row's entries (already model columns); returns the first entry's index. */
  append(columns: ArrayLike<number>, weights: ArrayLike<number>, n: number): number {
    if (this.#arenaUsed + n > this.#arenaCapacity) this.#layout(Math.max(this.#arenaUsed + n, this.#arenaCapacity * 2), this.#scratch);
    const start = this.#arenaUsed;
    const word = (this.#arenaOff >>> 2) + 2 * start;
    for (let k = 0; k < n; k++) {
      this.#u32[word + 2 * k] = columns[k]!;
      this.#f32[word + 2 * k + 1] = weights[k]!;
    }
    this.#arenaUsed += n;
    return start;
  }

  /**
   * Appends a stored `cols` row (store/trained-model.ts: (column u32, weight f32) pairs, the
   * arena's own layout) with one copy; returns its first entry's index. Columns are not checked:
   * the caller drops a row holding one past the model (malformed) before serving it.
   */
  appendPairs(bytes: Uint8Array, n: number): number {
    if (this.#arenaUsed + n > this.#arenaCapacity) this.#layout(Math.max(this.#arenaUsed + n, this.#arenaCapacity * 2), this.#scratch);
    const start = this.#arenaUsed;
    this.#u8.set(bytes.subarray(0, 8 * n), this.#arenaOff + 8 * start);
    this.#arenaUsed += n;
    return start;
  }

  /**
   * The arena for reading: entry e is (words[first + 2e] column, floats[first + 2e + 1] weight).
   * Valid until the next append or top (either may grow memory).
   */
  get arena(): { words: Uint32Array; floats: Float32Array; first: number } {
    return { words: this.#u32, floats: this.#f32, first: this.#arenaOff >>> 2 };
  }

  /**
   * The `max` best positive sums over `seeds` seeds (arena ranges with weights), without the
   * `exclude` columns and without items at or past `catalogSize`, strongest first. The views are
   * valid until the next call.
   */
  top(seedStart: Uint32Array, seedCount: Uint32Array, seedWeight: Float32Array, seeds: number, exclude: Uint32Array, excludeCount: number, catalogSize: number, max: number): { ix: Uint32Array; score: Float32Array } {
    let total = 0;
    for (let s = 0; s < seeds; s++) total += seedCount[s]!;
    const need = this.#scratch;
    if (total > need.used || seeds > need.seeds || excludeCount > need.exclude || max > need.out) {
      const grow = (have: number, want: number) => (want > have ? Math.max(want, have * 2) : have);
      this.#layout(this.#arenaCapacity, {
        columns: need.columns,
        used: grow(need.used, total),
        seeds: grow(need.seeds, seeds),
        exclude: grow(need.exclude, excludeCount),
        out: grow(need.out, max),
      });
    }
    // Stamps of past calls are never live; at the wrap every stamp is zeroed first.
    if (this.#epoch === 0xffffffff) {
      this.#u8.fill(0, this.#regions.sums, this.#regions.used);
      this.#epoch = 0;
    }
    const epoch = ++this.#epoch;
    const { sums: sumsOff, used: usedOff, seeds: seedsOff, exclude: excludeOff, outIx: outIxOff, outScore: outScoreOff, header } = this.#regions;
    const u32 = this.#u32;
    const f32 = this.#f32;
    for (let i = 0, w = seedsOff >>> 2; i < seeds; i++, w += 3) {
      u32[w] = seedStart[i]!;
      u32[w + 1] = seedCount[i]!;
      f32[w + 2] = seedWeight[i]!;
    }
    u32.set(exclude.subarray(0, excludeCount), excludeOff >>> 2);
    const h = header >>> 2;
    u32[h + SEED_COUNT] = seeds;
    u32[h + SEEDS_OFF] = seedsOff;
    u32[h + ARENA_OFF] = this.#arenaOff;
    u32[h + ARENA_COUNT] = this.#arenaUsed;
    u32[h + SUMS_OFF] = sumsOff;
    u32[h + EPOCH] = epoch;
    u32[h + USED_OFF] = usedOff;
    u32[h + EXCLUDE_COUNT] = excludeCount;
    u32[h + EXCLUDE_OFF] = excludeOff;
    u32[h + ITEMS_OFF] = this.#base;
    u32[h + COLUMNS] = this.#columns;
    u32[h + CATALOG_SIZE] = catalogSize;
    u32[h + MAX] = max;
    u32[h + OUT_IX_OFF] = outIxOff;
    u32[h + OUT_SCORE_OFF] = outScoreOff;
    let count: number;
    try {
      count = this.#exports.trainedTop(header);
    } catch (cause) {
      // Its checks should make a trap impossible; start the scratch over all the same.
      this.#layout(this.#arenaCapacity, this.#scratch);
      throw rankerError('trained kernel trapped', cause);
    }
    if (count < 0) throw kernelError(count);
    return { ix: u32.subarray(outIxOff >>> 2, (outIxOff >>> 2) + count), score: f32.subarray(outScoreOff >>> 2, (outScoreOff >>> 2) + count) };
  }

  /** Places the arena (its entries stay) and a zeroed scratch of these capacities after it. */
  #layout(arenaCapacity: number, scratch: Scratch): void {
    const regions = regionsAt(this.#arenaOff + align16(8 * arenaCapacity), scratch);
    const status = this.#exports.reserveArena(regions.end - this.#base);
    if (status !== 0) throw kernelError(status);
    const buffer = this.#exports.memory.buffer;
    if (buffer !== this.#buffer) {
      this.#buffer = buffer;
      this.#u32 = new Uint32Array(buffer);
      this.#f32 = new Float32Array(buffer);
      this.#u8 = new Uint8Array(buffer);
    }
    this.#arenaCapacity = arenaCapacity;
    this.#scratch = scratch;
    this.#regions = regions;
    this.#u8.fill(0, regions.sums, regions.end);
  }
}
