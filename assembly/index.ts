// Exported ABI of the ranking kernel (memory map and request header in abi.ts). Only entry
// points live here: the layout is in layout.ts, a ranking in rank.ts, selection in topk.ts.
// Every export checks its bounds once and returns an i32 status instead of throwing (an
// AssemblyScript throw traps and would leave the scratch half reset). It must not hold numeric
// work or state of its own.
import {
  ABI_VERSION, REQ_ALLOW_OFF, REQ_CONTENT_WEIGHT, REQ_CONTEXT_OFF, REQ_EXCLUDE_COUNT, REQ_EXCLUDE_OFF,
  REQ_HEADER_WORDS, REQ_K, REQ_NB_COUNT, REQ_NB_IX_OFF, REQ_NB_OFFSETS_OFF, REQ_NB_WEIGHT_OFF,
  REQ_POOL_COUNT, REQ_POOL_OFF, REQ_POPULARITY_WEIGHT, REQ_RECENCY_HALF_LIFE, REQ_RECENCY_WEIGHT,
  REQ_SEED_COUNT, REQ_SEED_HALF_LIFE, REQ_SEED_TIME_OFF, REQ_SEED_WEIGHT_OFF, STATUS_BAD_ARGS,
  STATUS_OUT_OF_MEMORY, VECTOR_DIM,
} from "./abi";
import { arenaBase, clearScratchAll, ensureMemory, fieldOffset, itemCount, layoutItems, requestOff } from "./layout";
import { rankRequest, word, wordF32 } from "./rank";
import { selectTopK } from "./topk";
import {
  TRAINED_ARENA_COUNT, TRAINED_ARENA_OFF, TRAINED_COLUMNS, TRAINED_EXCLUDE_COUNT, TRAINED_EXCLUDE_OFF,
  TRAINED_HEADER_WORDS, TRAINED_ITEMS_OFF, TRAINED_MAX, TRAINED_OUT_IX_OFF, TRAINED_OUT_SCORE_OFF,
  TRAINED_SEED_COUNT, TRAINED_SEEDS_OFF, TRAINED_EPOCH, TRAINED_SUMS_OFF, TRAINED_USED_OFF,
} from "./abi";
import { trainedTopRequest } from "./trained";

/** Largest element count a request array may have: its byte length must fit an i32. */
// @ts-ignore: decorator
@inline const MAX_REQUEST_ELEMENTS: u32 = 0x1fffffff;

export function abiVersion(): i32 {
  return ABI_VERSION;
}

/** f32 per content vector (items' and the context's). */
export function vectorDim(): i32 {
  return VECTOR_DIM;
}

/** First byte of the arena (16-byte aligned, after static data); the items region starts here. */
export function arenaOffset(): usize {
  return arenaBase();
}

/** Grows memory so the arena holds `bytes` from arenaOffset(); returns 0 or STATUS_OUT_OF_MEMORY. */
export function reserveArena(bytes: usize): i32 {
  return ensureMemory(<u64>arenaBase() + <u64>bytes) ? 0 : STATUS_OUT_OF_MEMORY;
}

/**
 * Lays the items region out for `n` items (memory grows as needed, never shrinks) and resets
 * the scratch. The region starts at arenaOffset() whatever n, so the records of the items below
 * the previous count keep what the host wrote (a host growing its catalog writes only the new
 * ones); the others are undefined until the host writes them. The request area moves
 * (layoutOffset(FIELD_REQUEST)). Returns 0 or a status.
 */
export function setItemCount(n: i32): i32 {
  return layoutItems(n);
}

/** Byte offset of a region of the memory map (FIELD_* in abi.ts), 0 for an unknown field. */
export function layoutOffset(field: i32): usize {
  return fieldOffset(field);
}

/** Resets all scratch (slot, excluded); for a host that caught a trap mid-call. */
export function clearScratch(): void {
  clearScratchAll();
}

@inline function memoryEnd(): u64 {
  return <u64>memory.size() << 16;
}

/** Whether `count` elements of 4 bytes at `off` lie 4-byte aligned in the request area. */
function inRequestArea(off: u32, count: u32): bool {
  if (count > MAX_REQUEST_ELEMENTS) return false;
  if (count == 0) return true;
  return (off & 3) == 0 && <usize>off >= requestOff && <u64>off + (<u64>count << 2) <= memoryEnd();
}

@inline function isPositive(x: f32): bool {
  return isFinite<f32>(x) && x > 0;
}

/** Whether the header at `req` and every array it names are sound (see abi.ts REQ_*). */
function isSoundRequest(req: usize): bool {
  if (!inRequestArea(<u32>req, REQ_HEADER_WORDS)) return false;
  const m = word(req, REQ_SEED_COUNT);
  const t = word(req, REQ_NB_COUNT);
  if (word(req, REQ_K) > <u32>i32.MAX_VALUE || m >= MAX_REQUEST_ELEMENTS) return false;
  if (!inRequestArea(word(req, REQ_SEED_WEIGHT_OFF), m)) return false;
  if (!inRequestArea(word(req, REQ_SEED_TIME_OFF), m)) return false;
  if (!inRequestArea(word(req, REQ_NB_OFFSETS_OFF), m + 1)) return false;
  if (!inRequestArea(word(req, REQ_NB_IX_OFF), t)) return false;
  if (!inRequestArea(word(req, REQ_NB_WEIGHT_OFF), t)) return false;
  if (!inRequestArea(word(req, REQ_POOL_OFF), word(req, REQ_POOL_COUNT))) return false;
  if (!inRequestArea(word(req, REQ_EXCLUDE_OFF), word(req, REQ_EXCLUDE_COUNT))) return false;
  const context = word(req, REQ_CONTEXT_OFF);
  if (context != 0 && !inRequestArea(context, VECTOR_DIM)) return false;
  const allow = word(req, REQ_ALLOW_OFF);
  if (allow != 0 && !inRequestArea(allow, (itemCount + 31) >> 5)) return false;
  if (!isPositive(wordF32(req, REQ_SEED_HALF_LIFE)) || !isPositive(wordF32(req, REQ_RECENCY_HALF_LIFE))) return false;
  if (!isFinite<f32>(wordF32(req, REQ_POPULARITY_WEIGHT))) return false;
  if (!isFinite<f32>(wordF32(req, REQ_RECENCY_WEIGHT)) || !isFinite<f32>(wordF32(req, REQ_CONTENT_WEIGHT))) return false;
  // CSR rows: offsets run 0 ..= t without going back, so every row stays inside nbIx/nbWeight.
  const offsets = <usize>word(req, REQ_NB_OFFSETS_OFF);
  let previous: u32 = 0;
  if (load<u32>(offsets) != 0) return false;
  for (let s: u32 = 1; s <= m; s++) {
    const o = load<u32>(offsets + (<usize>s << 2));
    if (o < previous) return false;
    previous = o;
  }
  return previous == t;
}

/**
 * Ranks the request whose header (REQ_HEADER_WORDS u32) is at `req` in the request area over
 * the resident items: writes k' = min(k, rankable candidates) ix and scores, best first, at
 * layoutOffset(FIELD_OUT_IX) and layoutOffset(FIELD_OUT_SCORE). Returns k' or STATUS_BAD_ARGS
 * (header or an array outside the request area, bad CSR offsets, half-life <= 0, non-finite
 * weight); nothing is touched then.
 */
export function rank(req: usize): i32 {
  if (!isSoundRequest(req)) return STATUS_BAD_ARGS;
  return rankRequest(req);
}

/**
 * Top-k of `n` f32 scores at `scoresOff`, written as u32 candidate indices at `outOff` (room
 * for k); both buffers in the request area. Non-finite scores are filtered out. Returns the
 * count written or a status.
 */
export function topK(scoresOff: usize, n: i32, k: i32, outOff: usize): i32 {
  if (n < 0 || k < 0) return STATUS_BAD_ARGS;
  if (scoresOff < requestOff || outOff < requestOff) return STATUS_BAD_ARGS;
  const limit = memoryEnd();
  if (<u64>scoresOff + (<u64>n << 2) > limit || <u64>outOff + (<u64>k << 2) > limit) return STATUS_BAD_ARGS;
  if (k == 0 || n == 0) return 0;
  return selectTopK(scoresOff, n, k, outOff);
}

/** Whether `count` elements of `bytes` each at `off` lie inside memory past static data, aligned to `align`. */
function inMemory(off: u32, count: u32, bytes: u32, align: u32): bool {
  if (count > MAX_REQUEST_ELEMENTS) return false;
  if (count == 0) return true;
  return (off & (align - 1)) == 0 && <usize>off >= arenaBase() && <u64>off + <u64>count * <u64>bytes <= memoryEnd();
}

/**
 * The trained model's best items for one user (trained.ts), on an instance used for that alone:
 * the header (TRAINED_HEADER_WORDS u32, abi.ts) at `req` names the seeds, the row arena, the
 * scratch and the output. Writes up to TRAINED_MAX ix and sums, strongest first, and returns the
 * count, or STATUS_BAD_ARGS (a region outside memory, a seed's rows outside the arena, epoch 0);
 * nothing is touched then.
 */
export function trainedTop(req: usize): i32 {
  if (!inMemory(<u32>req, TRAINED_HEADER_WORDS, 4, 4)) return STATUS_BAD_ARGS;
  const seeds = word(req, TRAINED_SEED_COUNT);
  const seedsOff = word(req, TRAINED_SEEDS_OFF);
  const arenaCount = word(req, TRAINED_ARENA_COUNT);
  if (word(req, TRAINED_EPOCH) == 0) return STATUS_BAD_ARGS;
  if (!inMemory(seedsOff, seeds, 12, 4) || !inMemory(word(req, TRAINED_ARENA_OFF), arenaCount, 8, 8)) return STATUS_BAD_ARGS;
  let total: u64 = 0;
  for (let s: u32 = 0; s < seeds; s++) {
    const record = <usize>seedsOff + <usize>s * 12;
    const start = <u64>load<u32>(record);
    const count = <u64>load<u32>(record, 4);
    if (start + count > <u64>arenaCount) return STATUS_BAD_ARGS;
    total += count;
  }
  if (total > <u64>u32.MAX_VALUE) return STATUS_BAD_ARGS;
  if (!inMemory(word(req, TRAINED_SUMS_OFF), word(req, TRAINED_COLUMNS), 8, 8) || !inMemory(word(req, TRAINED_USED_OFF), <u32>total, 8, 8)) return STATUS_BAD_ARGS;
  if (!inMemory(word(req, TRAINED_EXCLUDE_OFF), word(req, TRAINED_EXCLUDE_COUNT), 4, 4)) return STATUS_BAD_ARGS;
  if (!inMemory(word(req, TRAINED_ITEMS_OFF), word(req, TRAINED_COLUMNS), 4, 4)) return STATUS_BAD_ARGS;
  const max = word(req, TRAINED_MAX);
  if (max > <u32>i32.MAX_VALUE || !inMemory(word(req, TRAINED_OUT_IX_OFF), max, 4, 4) || !inMemory(word(req, TRAINED_OUT_SCORE_OFF), max, 4, 4)) return STATUS_BAD_ARGS;
  return trainedTopRequest(req);
}
