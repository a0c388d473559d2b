// One ranking over sparse candidates (rank() in index.ts, after its entry checks): gather
// candidates from the seeds' neighbour rows and the pool, drop the ones that may not be ranked,
// add the priors, select the top k. Owns the passes and the scratch reset; it must not check
// the request (index.ts did) nor allocate: every array is a region of the arena (layout.ts).
//
// Invariants behind the raw loads and stores (no bounds checks in the loops):
// - header words and request arrays lie inside memory, at or after requestOff (index.ts checks
//   them once), so the kernel's writes (scratch, output) never alias what it reads;
// - nbOffsets is 0 = o[0] <= o[1] <= ... <= o[m] = t (checked), so row j indexes stay < t;
// - an ix reaches slot/candidates/item arrays only if ix < itemCount, and each ix gets at most
//   one candidate position, so count <= itemCount: candIx/candScore (itemCount long) never
//   overflow, and k' <= count fits outIx/outScore.
import {
  ITEM_RECORD_BYTES, NO_SLOT, REC_POPULARITY, REC_PUBLISHED, REC_SLOT, REQ_ALLOW_OFF, REQ_ALLOWED_TYPES, REQ_CONTENT_WEIGHT, REQ_CONTEXT_OFF, REQ_EXCLUDE_COUNT,
  REQ_EXCLUDE_OFF, REQ_K, REQ_NB_IX_OFF, REQ_NB_OFFSETS_OFF, REQ_NB_WEIGHT_OFF, REQ_NOW_SEC,
  REQ_POOL_COUNT, REQ_POOL_OFF, REQ_POPULARITY_WEIGHT, REQ_RECENCY_HALF_LIFE, REQ_RECENCY_WEIGHT,
  REQ_SEED_COUNT, REQ_SEED_HALF_LIFE, REQ_SEED_TIME_OFF, REQ_SEED_WEIGHT_OFF,
} from "./abi";
import { clearExcluded, isRankable, markExcluded } from "./filter";
import { candIxOff, candScoreOff, itemCount, itemsOff, outIxOff, outScoreOff } from "./layout";
import { contentDot, decayedSeedWeight, recencyPrior } from "./score";

/** Byte offset of item `ix`'s record (abi.ts); callers check ix < itemCount. */
// @ts-ignore: decorator
@inline function recordOf(ix: u32): usize {
  return itemsOff + <usize>ix * ITEM_RECORD_BYTES;
}
import { selectTopPairs } from "./topk";

/** Header word `index` of the request at `req` (REQ_* in abi.ts). */
// @ts-ignore: decorator
@inline export function word(req: usize, index: i32): u32 {
  return load<u32>(req + (<usize>index << 2));
}

// @ts-ignore: decorator
@inline export function wordF32(req: usize, index: i32): f32 {
  return load<f32>(req + (<usize>index << 2));
}

/** Highest popularity among the candidates keepRankable kept (0 when none is positive). */
let keptMaxPopularity: f32 = 0;

/**
 * Adds decayedSeedWeight × neighbourWeight to every neighbour ix < n of every seed, creating a
 * candidate (score 0, position = count) on first sight through `slot`. Returns the new count.
 */
function gatherNeighbours(req: usize, n: u32, nowSec: u32): i32 {
  const m = <i32>word(req, REQ_SEED_COUNT);
  const weights = <usize>word(req, REQ_SEED_WEIGHT_OFF);
  const times = <usize>word(req, REQ_SEED_TIME_OFF);
  const offsets = <usize>word(req, REQ_NB_OFFSETS_OFF);
  const nbIx = <usize>word(req, REQ_NB_IX_OFF);
  const nbWeight = <usize>word(req, REQ_NB_WEIGHT_OFF);
  const halfLife = wordF32(req, REQ_SEED_HALF_LIFE);
  let count: u32 = 0;
  for (let s = 0; s < m; s++) {
    const at = <usize>s << 2;
    const w = decayedSeedWeight(load<f32>(weights + at), load<u32>(times + at), nowSec, halfLife);
    const end = load<u32>(offsets + at, 4);
    for (let j = load<u32>(offsets + at); j < end; j++) {
      const ix = load<u32>(nbIx + (<usize>j << 2));
      if (ix >= n) continue;
      const slotAt = recordOf(ix) + REC_SLOT;
      let pos = load<u32>(slotAt);
      if (pos == NO_SLOT) {
        pos = count++;
        store<u32>(slotAt, pos);
        store<u32>(candIxOff + (<usize>pos << 2), ix);
        store<f32>(candScoreOff + (<usize>pos << 2), 0);
      }
      const scoreAt = candScoreOff + (<usize>pos << 2);
      store<f32>(scoreAt, load<f32>(scoreAt) + w * load<f32>(nbWeight + (<usize>j << 2)));
    }
  }
  return <i32>count;
}

/** Adds the pool's ix < n that are not candidates yet, with score 0. Returns the new count. */
function gatherPool(req: usize, n: u32, count: i32): i32 {
  const p = <i32>word(req, REQ_POOL_COUNT);
  const pool = <usize>word(req, REQ_POOL_OFF);
  let c = <u32>count;
  for (let i = 0; i < p; i++) {
    const ix = load<u32>(pool + (<usize>i << 2));
    if (ix >= n) continue;
    const slotAt = recordOf(ix) + REC_SLOT;
    if (load<u32>(slotAt) != NO_SLOT) continue;
    store<u32>(slotAt, c);
    store<u32>(candIxOff + (<usize>c << 2), ix);
    store<f32>(candScoreOff + (<usize>c << 2), 0);
    c++;
  }
  return <i32>c;
}

/**
 * Resets `slot` for every candidate (dedup is over once gathering is) and compacts the rankable
 * ones to the front, in order; sets keptMaxPopularity. Returns how many were kept.
 */
function keepRankable(count: i32, nowSec: u32, typesMask: u32, allow: usize): i32 {
  let kept = 0;
  let maxPopularity: f32 = 0;
  for (let c = 0; c < count; c++) {
    const ix = load<u32>(candIxOff + (<usize>c << 2));
    store<u32>(recordOf(ix) + REC_SLOT, NO_SLOT);
    if (!isRankable(ix, nowSec, typesMask, allow)) continue;
    const popularity = load<f32>(recordOf(ix) + REC_POPULARITY);
    if (popularity > maxPopularity) maxPopularity = popularity;
    store<u32>(candIxOff + (<usize>kept << 2), ix);
    store<f32>(candScoreOff + (<usize>kept << 2), load<f32>(candScoreOff + (<usize>c << 2)));
    kept++;
  }
  keptMaxPopularity = maxPopularity;
  return kept;
}

/** Adds popularity, recency and content terms, in that order, to each kept candidate's score. */
function addPriors(req: usize, kept: i32, nowSec: u32): void {
  const popularityWeight = wordF32(req, REQ_POPULARITY_WEIGHT);
  const recencyWeight = wordF32(req, REQ_RECENCY_WEIGHT);
  const recencyHalfLife = wordF32(req, REQ_RECENCY_HALF_LIFE);
  const contentWeight = wordF32(req, REQ_CONTENT_WEIGHT);
  const context = <usize>word(req, REQ_CONTEXT_OFF);
  const maxPopularity = keptMaxPopularity;
  const usePopularity = popularityWeight != 0 && maxPopularity > 0;
  const useRecency = recencyWeight != 0;
  const useContent = context != 0 && contentWeight != 0;
  if (!usePopularity && !useRecency && !useContent) return;
  for (let c = 0; c < kept; c++) {
    const record = recordOf(load<u32>(candIxOff + (<usize>c << 2)));
    const scoreAt = candScoreOff + (<usize>c << 2);
    let score = load<f32>(scoreAt);
    if (usePopularity) {
      score += popularityWeight * (load<f32>(record + REC_POPULARITY) / maxPopularity);
    }
    if (useRecency) {
      score += recencyWeight * recencyPrior(load<u32>(record + REC_PUBLISHED), nowSec, recencyHalfLife);
    }
    if (useContent) score += contentWeight * contentDot(record, context);
    store<f32>(scoreAt, score);
  }
}

/** Ranks the request whose header is at `req`; returns k' (results in outIx/outScore). */
export function rankRequest(req: usize): i32 {
  const n = itemCount;
  const nowSec = word(req, REQ_NOW_SEC);
  const excludeCount = <i32>word(req, REQ_EXCLUDE_COUNT);
  const exclude = <usize>word(req, REQ_EXCLUDE_OFF);
  markExcluded(exclude, excludeCount, n);
  let count = gatherNeighbours(req, n, nowSec);
  count = gatherPool(req, n, count);
  const kept = keepRankable(count, nowSec, word(req, REQ_ALLOWED_TYPES), <usize>word(req, REQ_ALLOW_OFF));
  clearExcluded(exclude, excludeCount, n);
  addPriors(req, kept, nowSec);
  const k = <i32>word(req, REQ_K);
  return selectTopPairs(candIxOff, candScoreOff, kept, k < kept ? k : kept, outIxOff, outScoreOff);
}
