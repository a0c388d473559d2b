// Which candidates may be ranked: the item layout (catalog, enabled, expiry, type) and the
// request's exclusion bitset. Owns the bitset's set/clear; it must not score or order anything.
//
// Invariant for every raw load/store below: callers pass ix < itemCount (rank() skips any other
// ix before it becomes a candidate or touches the bitset), so each access lies inside the
// array's region laid out for itemCount items (layout.ts).
import { ALL_TYPES, ITEM_ENABLED, ITEM_IN_CATALOG, ITEM_RECORD_BYTES, REC_ENDS, REC_FLAGS, REC_TYPE } from "./abi";
import { excludedOff, itemsOff } from "./layout";

// @ts-ignore: decorator
@inline const RANKABLE_FLAGS: u32 = ITEM_IN_CATALOG | ITEM_ENABLED;
/** Type indices the u32 allowedTypesMask can name; higher ones (and UNKNOWN_TYPE) never pass it. */
// @ts-ignore: decorator
@inline const MASK_TYPES: u32 = 32;

/** Sets the bits of the `count` ix at `list`; ix >= n are ignored. */
export function markExcluded(list: usize, count: i32, n: u32): void {
  for (let i = 0; i < count; i++) {
    const ix = load<u32>(list + (<usize>i << 2));
    if (ix >= n) continue;
    const word = excludedOff + (<usize>(ix >> 5) << 2);
    store<u32>(word, load<u32>(word) | (1 << (ix & 31)));
  }
}

/** Clears the words markExcluded touched for the same list: O(count), not O(n / 32). */
export function clearExcluded(list: usize, count: i32, n: u32): void {
  for (let i = 0; i < count; i++) {
    const ix = load<u32>(list + (<usize>i << 2));
    if (ix >= n) continue;
    store<u32>(excludedOff + (<usize>(ix >> 5) << 2), 0);
  }
}

/**
 * Whether item `ix` may be ranked at `nowSec`: in catalog and enabled, not expired
 * (ends == 0 or ends > now), its type admitted by `typesMask`, its bit set in the request's
 * `allow` bitset (0 = no such bitset: all pass), and not excluded.
 */
// @ts-ignore: decorator
@inline export function isRankable(ix: u32, nowSec: u32, typesMask: u32, allow: usize): bool {
  const record = itemsOff + <usize>ix * ITEM_RECORD_BYTES;
  if ((<u32>load<u8>(record + REC_FLAGS) & RANKABLE_FLAGS) != RANKABLE_FLAGS) return false;
  const ends = load<u32>(record + REC_ENDS);
  if (ends != 0 && ends <= nowSec) return false;
  if (typesMask != ALL_TYPES) {
    const type = <u32>load<u8>(record + REC_TYPE);
    if (type >= MASK_TYPES || ((typesMask >> type) & 1) == 0) return false;
  }
  if (allow != 0 && (load<u32>(allow + (<usize>(ix >> 5) << 2)) & (1 << (ix & 31))) == 0) return false;
  return (load<u32>(excludedOff + (<usize>(ix >> 5) << 2)) & (1 << (ix & 31))) == 0;
}
