// ABI of the ranking kernel, shared with src/recommend/kernel.ts (which repeats every constant
// here; ABI_VERSION is checked when the module loads). Owns constants only: no state, no code.
//
// Conventions: offsets are byte offsets into linear memory (usize), lengths are element counts
// (i32), results are i32 (>= 0 a count, < 0 a STATUS_* error). No strings, no GC objects.
//
// Memory map (every region starts 16-byte aligned; the item records 64-byte aligned):
//
//   [static data][arena: arenaOffset() ...]
//   arena = ITEMS region, laid out by setItemCount(n), then the REQUEST area up to memory's end.
//
//   ITEMS region, in this order (layoutOffset(FIELD_*) gives each host-visible start):
//     items       one ITEM_RECORD_BYTES (64-byte, one cache line) record per ix, at ix × 64:   host
//                   +0  u32 slot     candidate position during a ranking, else NO_SLOT        kernel
//                   +4  u8  flags    bit 0 in catalog, bit 1 enabled (src/store/model-layout.ts)
//                   +5  u8  type     index of the item type in the environment's list (255 unknown)
//                   +8  u32 published  publication time, unix sec (0 unknown)
//                   +12 u32 ends     end_datetime, unix sec (0 none)
//                   +16 f32 popularity  any non-negative prior score
//                   +20 f32 vectorScale  content vector = vectorScale × vector (0 = none)
//                   +32 i8[VECTOR_DIM] vector  quantised content vector
//     candIx      u32[n]   candidates' ix, in order of first appearance                           kernel
//     candScore   f32[n]   candidates' scores                                                     kernel
//     outIx       u32[n]   result ix, best first (FIELD_OUT_IX)                                   kernel
//     outScore    f32[n]   result scores (FIELD_OUT_SCORE)                                        kernel
//     excluded    u32[ceil(n / 32)]  bitset of the request's exclusion list                        kernel
//   REQUEST area: from layoutOffset(FIELD_REQUEST) on; the host places a RankRequest header
//     (REQ_HEADER_WORDS u32 words) and its arrays anywhere in it (4-byte aligned) and calls
//     rank(headerOffset). topK's score and output buffers live here too.
//
// One record per item: a ranking touches each candidate's slot, flags, type, ends, popularity,
// publication time and vector, and with one array per field that was eight cache misses per
// candidate in a 100,000-item catalog (the vectors alone, f32, two); in one line it is one.
// Kernel scratch (slot, excluded) is all NO_SLOT / 0 between calls: rank() resets the entries it
// touched before returning, so a ranking costs O(candidates), never O(n).

// A trained-model instance (another instance of this module, src/recommend/trained-scores.ts)
// uses its memory differently: from arenaOffset() the host keeps the model columns' item ix
// (u32 per column), the model rows read so far as (column u32, weight f32) pairs, and a
// request's scratch (the sums table, all zero between calls; used slots; seed records; excluded
// columns; the output) and header, and calls trainedTop(header). setItemCount and rank are not
// used on it.

/** Bumped on any change to the exports, the memory map or the request header. */
// @ts-ignore: decorator
@inline export const ABI_VERSION: i32 = 8;

// @ts-ignore: decorator
@inline export const STATUS_BAD_ARGS: i32 = -1;
// @ts-ignore: decorator
@inline export const STATUS_OUT_OF_MEMORY: i32 = -2;

/** Content vector dimension: i8 per item (with a scale), f32 in a request's context vector. */
// @ts-ignore: decorator
@inline export const VECTOR_DIM: i32 = 32;

// Item record (see the memory map): size and field offsets.
// @ts-ignore: decorator
@inline export const ITEM_RECORD_BYTES: usize = 64;
// @ts-ignore: decorator
@inline export const REC_SLOT: usize = 0;
// @ts-ignore: decorator
@inline export const REC_FLAGS: usize = 4;
// @ts-ignore: decorator
@inline export const REC_TYPE: usize = 5;
// @ts-ignore: decorator
@inline export const REC_PUBLISHED: usize = 8;
// @ts-ignore: decorator
@inline export const REC_ENDS: usize = 12;
// @ts-ignore: decorator
@inline export const REC_POPULARITY: usize = 16;
// @ts-ignore: decorator
@inline export const REC_VECTOR_SCALE: usize = 20;
// @ts-ignore: decorator
@inline export const REC_VECTOR: usize = 32;

/**
 * Largest item count: 2^24 items take ~1.4 GB at ~81 bytes each (record 64, arrays 17), well
 * inside a 4 GiB wasm32 memory; also keeps candidate positions far below NO_SLOT.
 */
// @ts-ignore: decorator
@inline export const MAX_ITEMS: i32 = 1 << 24;
/** Highest byte count the arena may reach: 65,535 pages, as a u32 cannot say 4 GiB. */
// @ts-ignore: decorator
@inline export const MEMORY_LIMIT_BYTES: u64 = 0xffff0000;

/** `slot` value of an ix that is not a candidate. */
// @ts-ignore: decorator
@inline export const NO_SLOT: u32 = 0xffffffff;

// Item flags and types, as the model builder writes them (src/store/model-layout.ts).
// @ts-ignore: decorator
@inline export const ITEM_IN_CATALOG: u8 = 1;
// @ts-ignore: decorator
@inline export const ITEM_ENABLED: u8 = 2;
// @ts-ignore: decorator
@inline export const UNKNOWN_TYPE: u8 = 255;
/** allowedTypesMask that admits every type, UNKNOWN_TYPE included. */
// @ts-ignore: decorator
@inline export const ALL_TYPES: u32 = 0xffffffff;

// layoutOffset(field) fields.
// @ts-ignore: decorator
@inline export const FIELD_ITEMS: i32 = 0;
// @ts-ignore: decorator
@inline export const FIELD_OUT_IX: i32 = 6;
// @ts-ignore: decorator
@inline export const FIELD_OUT_SCORE: i32 = 7;
// @ts-ignore: decorator
@inline export const FIELD_REQUEST: i32 = 8;

// RankRequest header: u32 words at the offset given to rank(). Counts are element counts; *_OFF
// are byte offsets of arrays in the REQUEST area (4-byte aligned); f32 words are stored as f32.
// @ts-ignore: decorator
@inline export const REQ_K: i32 = 0; //                 results wanted, >= 0
// @ts-ignore: decorator
@inline export const REQ_NOW_SEC: i32 = 1; //           unix sec
// @ts-ignore: decorator
@inline export const REQ_ALLOWED_TYPES: i32 = 2; //     bit t admits type t; ALL_TYPES admits all
// @ts-ignore: decorator
@inline export const REQ_SEED_COUNT: i32 = 3; //        m
// @ts-ignore: decorator
@inline export const REQ_SEED_WEIGHT_OFF: i32 = 4; //   f32[m]
// @ts-ignore: decorator
@inline export const REQ_SEED_TIME_OFF: i32 = 5; //     u32[m] unix sec, 0 = no decay
// @ts-ignore: decorator
@inline export const REQ_NB_OFFSETS_OFF: i32 = 6; //    u32[m + 1] CSR: 0, ..., total, non-decreasing
// @ts-ignore: decorator
@inline export const REQ_NB_COUNT: i32 = 7; //          total neighbours t
// @ts-ignore: decorator
@inline export const REQ_NB_IX_OFF: i32 = 8; //         u32[t]
// @ts-ignore: decorator
@inline export const REQ_NB_WEIGHT_OFF: i32 = 9; //     f32[t]
// @ts-ignore: decorator
@inline export const REQ_POOL_COUNT: i32 = 10; //       p
// @ts-ignore: decorator
@inline export const REQ_POOL_OFF: i32 = 11; //         u32[p] extra candidates (score starts at 0)
// @ts-ignore: decorator
@inline export const REQ_EXCLUDE_COUNT: i32 = 12; //    e
// @ts-ignore: decorator
@inline export const REQ_EXCLUDE_OFF: i32 = 13; //      u32[e] never ranked
// @ts-ignore: decorator
@inline export const REQ_CONTEXT_OFF: i32 = 14; //      f32[VECTOR_DIM], or 0 = no context vector
// @ts-ignore: decorator
@inline export const REQ_SEED_HALF_LIFE: i32 = 15; //   f32 sec, finite > 0
// @ts-ignore: decorator
@inline export const REQ_POPULARITY_WEIGHT: i32 = 16; // f32, finite
// @ts-ignore: decorator
@inline export const REQ_RECENCY_WEIGHT: i32 = 17; //   f32, finite
// @ts-ignore: decorator
@inline export const REQ_RECENCY_HALF_LIFE: i32 = 18; // f32 sec, finite > 0
// @ts-ignore: decorator
@inline export const REQ_CONTENT_WEIGHT: i32 = 19; //   f32, finite
// @ts-ignore: decorator
@inline export const REQ_ALLOW_OFF: i32 = 20; //        u32[ceil(n / 32)] bitset of ix that may be ranked, or 0 = all
// @ts-ignore: decorator
@inline export const REQ_HEADER_WORDS: i32 = 21;

// TrainedTop header: u32 words at the offset given to trainedTop(). *_OFF are byte offsets
// (4-byte aligned, the sums and arena 8-byte aligned) inside memory; counts are element counts.
// @ts-ignore: decorator
@inline export const TRAINED_SEED_COUNT: i32 = 0; //    s
// @ts-ignore: decorator
@inline export const TRAINED_SEEDS_OFF: i32 = 1; //     s records: start u32, count u32 (arena entries), weight f32
// @ts-ignore: decorator
@inline export const TRAINED_ARENA_OFF: i32 = 2; //     (column u32, weight f32) pairs
// @ts-ignore: decorator
@inline export const TRAINED_ARENA_COUNT: i32 = 3; //   pairs in the arena
// @ts-ignore: decorator
@inline export const TRAINED_SUMS_OFF: i32 = 4; //      per column (stamp u32, slot u32): live in this call when stamp = epoch
// @ts-ignore: decorator
@inline export const TRAINED_EPOCH: i32 = 5; //         this call's stamp, never 0 (a zeroed slot is never live)
// @ts-ignore: decorator
@inline export const TRAINED_USED_OFF: i32 = 6; //      (column u32, sum f32)[Σ counts] by slot, first touched first (scratch)
// @ts-ignore: decorator
@inline export const TRAINED_EXCLUDE_COUNT: i32 = 7; // x
// @ts-ignore: decorator
@inline export const TRAINED_EXCLUDE_OFF: i32 = 8; //   u32[x] columns never returned
// @ts-ignore: decorator
@inline export const TRAINED_ITEMS_OFF: i32 = 9; //     u32[columns] item ix of each column
// @ts-ignore: decorator
@inline export const TRAINED_COLUMNS: i32 = 10; //      columns
// @ts-ignore: decorator
@inline export const TRAINED_CATALOG_SIZE: i32 = 11; // items with ix >= this are left out
// @ts-ignore: decorator
@inline export const TRAINED_MAX: i32 = 12; //          results wanted
// @ts-ignore: decorator
@inline export const TRAINED_OUT_IX_OFF: i32 = 13; //   u32[max] result ix, strongest first
// @ts-ignore: decorator
@inline export const TRAINED_OUT_SCORE_OFF: i32 = 14; // f32[max] their sums
// @ts-ignore: decorator
@inline export const TRAINED_HEADER_WORDS: i32 = 15;
