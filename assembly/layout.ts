// The kernel's arena: where the resident item arrays, the kernel's scratch and the request area
// sit (memory map in abi.ts). Owns the layout globals and memory growth; it must not read or
// write item data itself, beyond initialising scratch when the layout changes.
import {
  FIELD_ENDS, FIELD_FLAGS, FIELD_OUT_IX, FIELD_OUT_SCORE, FIELD_POPULARITY, FIELD_PUBLISHED,
  FIELD_REQUEST, FIELD_TYPE, FIELD_VECTORS, MAX_ITEMS, MEMORY_LIMIT_BYTES, STATUS_BAD_ARGS,
  STATUS_OUT_OF_MEMORY, VECTOR_BYTES,
} from "./abi";

/** First byte after static data, 16-byte aligned. */
// @ts-ignore: decorator
@inline export function arenaBase(): usize {
  return (__heap_base + 15) & ~(<usize>15);
}

// @ts-ignore: decorator
@inline function align16(at: u64): u64 {
  return (at + 15) & ~(<u64>15);
}

/** Item count of the current layout; every ix >= itemCount is ignored by rank(). */
export let itemCount: u32 = 0;
export let vectorsOff: usize = arenaBase();
export let popularityOff: usize = arenaBase();
export let publishedOff: usize = arenaBase();
export let endsOff: usize = arenaBase();
export let slotOff: usize = arenaBase();
export let candIxOff: usize = arenaBase();
export let candScoreOff: usize = arenaBase();
export let outIxOff: usize = arenaBase();
export let outScoreOff: usize = arenaBase();
export let excludedOff: usize = arenaBase();
export let flagsOff: usize = arenaBase();
export let typeOff: usize = arenaBase();
/** First byte of the request area (after the items region). */
export let requestOff: usize = arenaBase();

/** Grows memory so that it holds `end` bytes; false when the engine refuses. */
export function ensureMemory(end: u64): bool {
  if (end > MEMORY_LIMIT_BYTES) return false;
  const have = <u64>memory.size() << 16;
  if (end <= have) return true;
  const pages = <i32>((end - have + 0xffff) >> 16);
  return memory.grow(pages) >= 0;
}

/**
 * Lays the items region out for `n` items and initialises the scratch (slot all NO_SLOT,
 * excluded all 0). Resident arrays hold whatever memory held: the host writes them next.
 * Returns 0, STATUS_BAD_ARGS (n outside 0..MAX_ITEMS) or STATUS_OUT_OF_MEMORY (layout unchanged).
 */
export function layoutItems(n: i32): i32 {
  if (n < 0 || n > MAX_ITEMS) return STATUS_BAD_ARGS;
  const count = <u64>n;
  const words = (count + 31) >> 5;
  // u64 arithmetic: n × VECTOR_BYTES alone may pass 2^32 before the limit check.
  let at = <u64>arenaBase();
  const vectors = at; at = align16(at + count * <u64>VECTOR_BYTES);
  const popularity = at; at = align16(at + count * 4);
  const published = at; at = align16(at + count * 4);
  const ends = at; at = align16(at + count * 4);
  const slot = at; at = align16(at + count * 4);
  const candIx = at; at = align16(at + count * 4);
  const candScore = at; at = align16(at + count * 4);
  const outIx = at; at = align16(at + count * 4);
  const outScore = at; at = align16(at + count * 4);
  const excluded = at; at = align16(at + words * 4);
  const flags = at; at = align16(at + count);
  const type = at; at = align16(at + count);
  if (!ensureMemory(at)) return STATUS_OUT_OF_MEMORY;

  vectorsOff = <usize>vectors;
  popularityOff = <usize>popularity;
  publishedOff = <usize>published;
  endsOff = <usize>ends;
  slotOff = <usize>slot;
  candIxOff = <usize>candIx;
  candScoreOff = <usize>candScore;
  outIxOff = <usize>outIx;
  outScoreOff = <usize>outScore;
  excludedOff = <usize>excluded;
  flagsOff = <usize>flags;
  typeOff = <usize>type;
  requestOff = <usize>at;
  itemCount = <u32>n;
  clearScratchAll();
  return 0;
}

/** Resets the whole scratch: after a layout change, or if a call was ever cut short. */
export function clearScratchAll(): void {
  memory.fill(slotOff, 0xff, <usize>itemCount << 2);
  memory.fill(excludedOff, 0, <usize>((itemCount + 31) >> 5) << 2);
}

/** Byte offset of a host-visible region (FIELD_*), or 0 for an unknown field. */
export function fieldOffset(field: i32): usize {
  switch (field) {
    case FIELD_FLAGS: return flagsOff;
    case FIELD_TYPE: return typeOff;
    case FIELD_PUBLISHED: return publishedOff;
    case FIELD_ENDS: return endsOff;
    case FIELD_POPULARITY: return popularityOff;
    case FIELD_VECTORS: return vectorsOff;
    case FIELD_OUT_IX: return outIxOff;
    case FIELD_OUT_SCORE: return outScoreOff;
    case FIELD_REQUEST: return requestOff;
    default: return 0;
  }
}
