// The trained model's per-user scores: Σ over a user's history items of weight × the item's
// sparse row, then the best few. Runs in its own kernel instance (src/recommend/trained-scores.ts),
// whose memory holds the model version's rows as (column u32, weight f32) pairs and a request's
// scratch; the host lays both out (memory map in abi.ts, TRAINED_*). Owns this arithmetic only:
// the order of every step matches the TypeScript reference (src/recommend/reference-trained.ts),
// sums in f64 rounded to f32 as a Float32Array would, so both give the same lists exactly.
// Each model column has a dense (stamp, slot) word pair, live when its stamp is this call's epoch:
// no clearing between calls. A column's sum sits in its slot of the used list, (column, sum)
// pairs in the order first touched, so selecting the best reads that list straight through: with
// the sums beside the stamps, selection read them back in random order over a few hundred KB
// (~40% of trainedTop's time in a 100,000-item served run). The hash table the dense pairs
// replaced cost ~7 ns per weight in probing, 27 µs a request at 100,000 items.
// Raw loads and stores: index.ts trainedTop checked every region against memory first.
import {
  TRAINED_ARENA_OFF, TRAINED_CATALOG_SIZE, TRAINED_COLUMNS, TRAINED_EPOCH, TRAINED_EXCLUDE_COUNT,
  TRAINED_EXCLUDE_OFF, TRAINED_ITEMS_OFF, TRAINED_MAX, TRAINED_OUT_IX_OFF, TRAINED_OUT_SCORE_OFF,
  TRAINED_SEED_COUNT, TRAINED_SEEDS_OFF, TRAINED_SUMS_OFF, TRAINED_USED_OFF,
} from "./abi";
import { word } from "./rank";

/** Runs the request whose header is at `req`; returns the count written (best first). */
export function trainedTopRequest(req: usize): i32 {
  const seeds = word(req, TRAINED_SEED_COUNT);
  const seedsOff = <usize>word(req, TRAINED_SEEDS_OFF);
  const arena = <usize>word(req, TRAINED_ARENA_OFF);
  const sums = <usize>word(req, TRAINED_SUMS_OFF);
  const epoch = word(req, TRAINED_EPOCH);
  const columns = word(req, TRAINED_COLUMNS);
  const used = <usize>word(req, TRAINED_USED_OFF);
  let count: u32 = 0;
  for (let s: u32 = 0; s < seeds; s++) {
    const record = seedsOff + <usize>s * 12;
    const start = load<u32>(record);
    const end = start + load<u32>(record, 4);
    const weight = <f64>load<f32>(record, 8);
    for (let e = start; e < end; e++) {
      const entry = arena + (<usize>e << 3);
      const column = load<u32>(entry);
      // Not a model column (a malformed row): the reference drops it when selecting.
      if (column >= columns) continue;
      const at = sums + (<usize>column << 3);
      let slot: usize;
      if (load<u32>(at) != epoch) {
        store<u32>(at, epoch);
        store<u32>(at, count, 4);
        slot = used + (<usize>count << 3);
        store<u32>(slot, column);
        store<f32>(slot, 0, 4);
        count++;
      } else {
        slot = used + (<usize>load<u32>(at, 4) << 3);
      }
      store<f32>(slot, <f32>(<f64>load<f32>(slot, 4) + weight * <f64>load<f32>(entry, 4)), 4);
    }
  }
  // A user's consumed items are often the model's strongest scores: out before selecting.
  const excluded = <usize>word(req, TRAINED_EXCLUDE_OFF);
  const excludeCount = word(req, TRAINED_EXCLUDE_COUNT);
  for (let x: u32 = 0; x < excludeCount; x++) {
    const column = load<u32>(excluded + (<usize>x << 2));
    if (column >= columns) continue;
    const at = sums + (<usize>column << 3);
    if (load<u32>(at) == epoch) store<f32>(used + (<usize>load<u32>(at, 4) << 3), -Infinity, 4);
  }
  return best(req, count);
}

/**
 * The best TRAINED_MAX positive sums among the `count` columns summed, strongest first (a min-heap
 * of the best so far, then an insertion sort). Columns whose item is outside the catalog view
 * (ix >= catalogSize) are left out.
 */
function best(req: usize, count: u32): i32 {
  const used = <usize>word(req, TRAINED_USED_OFF);
  const items = <usize>word(req, TRAINED_ITEMS_OFF);
  const catalogSize = word(req, TRAINED_CATALOG_SIZE);
  const max = <i32>word(req, TRAINED_MAX);
  const heapIx = <usize>word(req, TRAINED_OUT_IX_OFF);
  const heapScore = <usize>word(req, TRAINED_OUT_SCORE_OFF);
  // Positive sums first, compacted in place without a branch: whether a sum is positive is a coin
  // toss for the branch predictor, and the selection then mostly sees sums below its heap's least.
  let positive: u32 = 0;
  for (let t: u32 = 0; t < count; t++) {
    const pair = load<u64>(used + (<usize>t << 3));
    store<u64>(used + (<usize>positive << 3), pair);
    positive += <u32>(reinterpret<f32>(<u32>(pair >>> 32)) > 0);
  }
  let size: i32 = 0;
  for (let t: u32 = 0; t < positive; t++) {
    const slot = used + (<usize>t << 3);
    const score = load<f32>(slot, 4);
    // Only positive scores (kept above): a negative one says "less likely than knowing nothing".
    if (size == max && !(score > load<f32>(heapScore))) continue;
    const ix = load<u32>(items + (<usize>load<u32>(slot) << 2));
    if (ix >= catalogSize) continue;
    let i: i32;
    if (size < max) {
      i = size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        const parentScore = load<f32>(heapScore + (<usize>parent << 2));
        if (parentScore <= score) break;
        store<u32>(heapIx + (<usize>i << 2), load<u32>(heapIx + (<usize>parent << 2)));
        store<f32>(heapScore + (<usize>i << 2), parentScore);
        i = parent;
      }
    } else {
      i = 0;
      while (true) {
        let child = 2 * i + 1;
        if (child >= size) break;
        if (child + 1 < size && load<f32>(heapScore + (<usize>(child + 1) << 2)) < load<f32>(heapScore + (<usize>child << 2))) child++;
        const childScore = load<f32>(heapScore + (<usize>child << 2));
        if (childScore >= score) break;
        store<u32>(heapIx + (<usize>i << 2), load<u32>(heapIx + (<usize>child << 2)));
        store<f32>(heapScore + (<usize>i << 2), childScore);
        i = child;
      }
    }
    store<u32>(heapIx + (<usize>i << 2), ix);
    store<f32>(heapScore + (<usize>i << 2), score);
  }
  for (let i = 1; i < size; i++) {
    const w = load<f32>(heapScore + (<usize>i << 2));
    const x = load<u32>(heapIx + (<usize>i << 2));
    let j = i - 1;
    while (j >= 0 && load<f32>(heapScore + (<usize>j << 2)) < w) {
      store<f32>(heapScore + (<usize>(j + 1) << 2), load<f32>(heapScore + (<usize>j << 2)));
      store<u32>(heapIx + (<usize>(j + 1) << 2), load<u32>(heapIx + (<usize>j << 2)));
      j--;
    }
    store<f32>(heapScore + (<usize>(j + 1) << 2), w);
    store<u32>(heapIx + (<usize>(j + 1) << 2), x);
  }
  return size;
}
