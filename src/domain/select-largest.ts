/**
 * @module domain/select-largest
 * Partial selection of the k largest entries of an index array by a key: the trainer prunes
 * each model row (and each co-occurrence row it regresses on) to the best few hundred of
 * thousands, where a full sort cost most of the selection. Pure, no allocation.
 */

/**
 * Reorders `idx[0 .. count)` so its `k` entries of largest `key(idx[i])` come first, in no
 * particular order: Hoare quickselect, O(count) on average.
 */
export function selectLargest(idx: Uint32Array, count: number, k: number, key: (i: number) => number): void {
  if (k >= count) return;
  let lo = 0;
  let hi = count - 1;
  while (lo < hi) {
    const pivot = key(idx[(lo + hi) >>> 1]!);
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (key(idx[i]!) > pivot) i++;
      while (key(idx[j]!) < pivot) j--;
      if (i <= j) {
        const t = idx[i]!;
        idx[i++] = idx[j]!;
        idx[j--] = t;
      }
    }
    if (k - 1 <= j) hi = j;
    else if (k - 1 >= i) lo = i;
    else return;
  }
}

/** Sorts `idx[0 .. count)` by descending key (count is small: the entries selected). */
export function sortByKey(idx: Uint32Array, count: number, key: (i: number) => number): void {
  idx.subarray(0, count).sort((a, b) => key(b) - key(a));
}
