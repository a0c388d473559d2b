// ABI of the ranking kernel, shared with src/recommend/kernel.ts (which repeats every constant
// here; ABI_VERSION is checked when the module loads). Owns constants only: no state, no code.
//
// Conventions: offsets are byte offsets into linear memory (usize), lengths are element counts
// (i32), results are i32 (>= 0 a count, < 0 a STATUS_* error). No strings, no GC objects.
//
// Memory map (every region starts 16-byte aligned):
//
//   [static data][arena: arenaOffset() ...]
//   arena = ITEMS region, laid out by setItemCount(n), then the REQUEST area up to memory's end.
//
//   ITEMS region, in this order (layoutOffset(FIELD_*) gives each host-visible start):
//     vectors     f32[n × VECTOR_DIM]  content vectors, row ix at ix × VECTOR_BYTES (all 0 = none)  host
//     popularity  f32[n]   any non-negative prior score (all-time or trending: host's choice)      host
//     published   u32[n]   publication time, unix sec (0 unknown)                                 host
//     ends        u32[n]   end_datetime, unix sec (0 none)                                        host
//     slot        u32[n]   candidate position of an ix during a ranking, else NO_SLOT            kernel
//     candIx      u32[n]   candidates' ix, in order of first appearance                           kernel
//     candScore   f32[n]   candidates' scores                                                     kernel
//     outIx       u32[n]   result ix, best first (FIELD_OUT_IX)                                   kernel
//     outScore    f32[n]   result scores (FIELD_OUT_SCORE)                                        kernel
//     excluded    u32[ceil(n / 32)]  bitset of the request's exclusion list                        kernel
//     flags       u8[n]    bit 0 in catalog, bit 1 enabled (src/store/model.ts)                   host
//     type        u8[n]    index of the item type in the environment's list (255 unknown)         host
//   REQUEST area: from layoutOffset(FIELD_REQUEST) on; the host places a RankRequest header
//     (REQ_HEADER_WORDS u32 words) and its arrays anywhere in it (4-byte aligned) and calls
//     rank(headerOffset). topK's score and output buffers live here too.
//
// Kernel scratch (slot, excluded) is all NO_SLOT / 0 between calls: rank() resets the entries it
// touched before returning, so a ranking costs O(candidates), never O(n).

/** Bumped on any change to the exports, the memory map or the request header. */
// @ts-ignore: decorator
@inline export const ABI_VERSION: i32 = 4;

// @ts-ignore: decorator
@inline export const STATUS_BAD_ARGS: i32 = -1;
// @ts-ignore: decorator
@inline export const STATUS_OUT_OF_MEMORY: i32 = -2;

/** Content vector dimension: f32 per item and in a request's context vector. */
// @ts-ignore: decorator
@inline export const VECTOR_DIM: i32 = 32;
// @ts-ignore: decorator
@inline export const VECTOR_BYTES: usize = 128; // VECTOR_DIM × 4

/**
 * Largest item count: 2^24 items take ~2.9 GB at ~170 bytes each (vectors 128, arrays 42), the
 * most a 4 GiB wasm32 memory holds with room for requests; also keeps candidate positions far
 * below NO_SLOT.
 */
// @ts-ignore: decorator
@inline export const MAX_ITEMS: i32 = 1 << 24;
/** Highest byte count the arena may reach: 65,535 pages, as a u32 cannot say 4 GiB. */
// @ts-ignore: decorator
@inline export const MEMORY_LIMIT_BYTES: u64 = 0xffff0000;

/** `slot` value of an ix that is not a candidate. */
// @ts-ignore: decorator
@inline export const NO_SLOT: u32 = 0xffffffff;

// Item flags and types, as the model builder writes them (src/store/model.ts).
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
@inline export const FIELD_FLAGS: i32 = 0;
// @ts-ignore: decorator
@inline export const FIELD_TYPE: i32 = 1;
// @ts-ignore: decorator
@inline export const FIELD_PUBLISHED: i32 = 2;
// @ts-ignore: decorator
@inline export const FIELD_ENDS: i32 = 3;
// @ts-ignore: decorator
@inline export const FIELD_POPULARITY: i32 = 4;
// @ts-ignore: decorator
@inline export const FIELD_VECTORS: i32 = 5;
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
