// The kernel's arena: where the resident item arrays, the kernel's scratch and the request area
// sit (memory map in abi.ts). Owns the layout globals and memory growth; it must not read or
// write item data itself, beyond initialising scratch when the layout changes.
import {
  FIELD_ITEMS, FIELD_OUT_IX, FIELD_OUT_SCORE, FIELD_REQUEST, ITEM_RECORD_BYTES, MAX_ITEMS,
  MEMORY_LIMIT_BYTES, NO_SLOT, REC_SLOT, STATUS_BAD_ARGS, STATUS_OUT_OF_MEMORY,
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

// @ts-ignore: decorator
@inline function align64(at: u64): u64 {
  return (at + 63) & ~(<u64>63);
}

/** Item count of the current layout; every ix >= itemCount is ignored by rank(). */
export let itemCount: u32 = 0;
/** Item records, ITEM_RECORD_BYTES each (abi.ts), 64-byte aligned: one cache line per item. */
export let itemsOff: usize = arenaBase();
export let candIxOff: usize = arenaBase();
export let candScoreOff: usize = arenaBase();
export let outIxOff: usize = arenaBase();
export let outScoreOff: usize = arenaBase();
export let excludedOff: usize = arenaBase();
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
 * Lays the items region out for `n` items and initialises the scratch (every record's slot
 * NO_SLOT, excluded all 0). Records hold whatever memory held otherwise: the items region always
 * starts at arenaBase, so records below the previous count keep their values (hosts rely on it
 * when the catalog grows); the host writes the rest next.
 * Returns 0, STATUS_BAD_ARGS (n outside 0..MAX_ITEMS) or STATUS_OUT_OF_MEMORY (layout unchanged).
 */
export function layoutItems(n: i32): i32 {
  if (n < 0 || n > MAX_ITEMS) return STATUS_BAD_ARGS;
  const count = <u64>n;
  const words = (count + 31) >> 5;
  // u64 arithmetic: n × ITEM_RECORD_BYTES alone may pass 2^32 before the limit check.
  let at = align64(<u64>arenaBase());
  const items = at; at = align16(at + count * <u64>ITEM_RECORD_BYTES);
  const candIx = at; at = align16(at + count * 4);
  const candScore = at; at = align16(at + count * 4);
  const outIx = at; at = align16(at + count * 4);
  const outScore = at; at = align16(at + count * 4);
  const excluded = at; at = align16(at + words * 4);
  if (!ensureMemory(at)) return STATUS_OUT_OF_MEMORY;

  itemsOff = <usize>items;
  candIxOff = <usize>candIx;
  candScoreOff = <usize>candScore;
  outIxOff = <usize>outIx;
  outScoreOff = <usize>outScore;
  excludedOff = <usize>excluded;
  requestOff = <usize>at;
  itemCount = <u32>n;
  clearScratchAll();
  return 0;
}

/** Resets the whole scratch: after a layout change, or if a call was ever cut short. */
export function clearScratchAll(): void {
  for (let ix: u32 = 0; ix < itemCount; ix++) store<u32>(itemsOff + <usize>ix * ITEM_RECORD_BYTES + REC_SLOT, NO_SLOT);
  memory.fill(excludedOff, 0, <usize>((itemCount + 31) >> 5) << 2);
}

/** Byte offset of a host-visible region (FIELD_*), or 0 for an unknown field. */
export function fieldOffset(field: i32): usize {
  switch (field) {
    case FIELD_ITEMS: return itemsOff;
    case FIELD_OUT_IX: return outIxOff;
    case FIELD_OUT_SCORE: return outScoreOff;
    case FIELD_REQUEST: return requestOff;
    default: return 0;
  }
}
