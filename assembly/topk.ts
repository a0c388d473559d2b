// Top-k selection over a score array with a bounded min-heap: O(n log k), no allocation.
// Order: higher score first; equal scores keep the lower candidate index first, so results
// are deterministic and match the reference ranker.

@inline function worse(scores: usize, a: u32, b: u32): bool {
  const sa = load<f32>(scores + (<usize>a << 2));
  const sb = load<f32>(scores + (<usize>b << 2));
  return sa < sb || (sa == sb && a > b);
}

function siftDown(scores: usize, heap: usize, size: i32, start: i32): void {
  let i = start;
  while (true) {
    const l = 2 * i + 1;
    if (l >= size) return;
    let m = l;
    const r = l + 1;
    if (r < size && worse(scores, load<u32>(heap + (<usize>r << 2)), load<u32>(heap + (<usize>l << 2)))) m = r;
    const vi = load<u32>(heap + (<usize>i << 2));
    const vm = load<u32>(heap + (<usize>m << 2));
    if (!worse(scores, vm, vi)) return;
    store<u32>(heap + (<usize>i << 2), vm);
    store<u32>(heap + (<usize>m << 2), vi);
    i = m;
  }
}

/** Writes the indices of the k best finite scores into `out`, best first; returns how many. */
export function selectTopK(scores: usize, n: i32, k: i32, out: usize): i32 {
  let size = 0;
  for (let c = 0; c < n; c++) {
    const s = load<f32>(scores + (<usize>c << 2));
    if (!isFinite<f32>(s)) continue; // -Infinity marks a filtered candidate
    if (size < k) {
      store<u32>(out + (<usize>size << 2), <u32>c);
      size++;
      if (size == k) for (let i = (k >> 1) - 1; i >= 0; i--) siftDown(scores, out, k, i);
    } else if (worse(scores, load<u32>(out), <u32>c)) {
      store<u32>(out, <u32>c);
      siftDown(scores, out, k, 0);
    }
  }
  if (size < k) for (let i = (size >> 1) - 1; i >= 0; i--) siftDown(scores, out, size, i);
  // Heap-sort in place: repeatedly move the worst to the end.
  for (let end = size - 1; end > 0; end--) {
    const top = load<u32>(out);
    store<u32>(out, load<u32>(out + (<usize>end << 2)));
    store<u32>(out + (<usize>end << 2), top);
    siftDown(scores, out, end, 0);
  }
  return size;
}
