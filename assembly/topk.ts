// Top-k selection with a bounded min-heap (root = worst kept): O(n log k), no allocation.
// Owns ordering only; it must not score or filter (callers mark filtered candidates non-finite or
// leave them out). selectTopK orders by score, ties by lower candidate index (the v1 topK export).
// Raw loads/stores: callers (index.ts topK, rank.ts) checked that scores hold n values and the
// output room for k, and heap positions stay below the current heap size <= k.

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

// Top-k over (score, ix) pairs, for rank(): the heap lives in the output arrays themselves, so
// selection needs no memory of its own. Order: higher score first, equal scores by lower ix (not
// by candidate position, so results do not depend on the order candidates were gathered in).

@inline function pairWorse(sa: f32, ia: u32, sb: f32, ib: u32): bool {
  return sa < sb || (sa == sb && ia > ib);
}

function siftDownPairs(ixs: usize, scores: usize, size: i32, start: i32): void {
  let i = start;
  const si = load<f32>(scores + (<usize>i << 2));
  const ii = load<u32>(ixs + (<usize>i << 2));
  while (true) {
    const l = 2 * i + 1;
    if (l >= size) break;
    let m = l;
    let sm = load<f32>(scores + (<usize>l << 2));
    let im = load<u32>(ixs + (<usize>l << 2));
    const r = l + 1;
    if (r < size) {
      const sr = load<f32>(scores + (<usize>r << 2));
      const ir = load<u32>(ixs + (<usize>r << 2));
      if (pairWorse(sr, ir, sm, im)) { m = r; sm = sr; im = ir; }
    }
    if (!pairWorse(sm, im, si, ii)) break;
    store<f32>(scores + (<usize>i << 2), sm);
    store<u32>(ixs + (<usize>i << 2), im);
    i = m;
  }
  store<f32>(scores + (<usize>i << 2), si);
  store<u32>(ixs + (<usize>i << 2), ii);
}

/**
 * The k best of `count` candidates (ix at `candIx`, score at `candScore`) written best first to
 * `outIx`/`outScore` (room for k each); non-finite scores are skipped. Returns how many.
 */
export function selectTopPairs(candIx: usize, candScore: usize, count: i32, k: i32, outIx: usize, outScore: usize): i32 {
  if (k <= 0) return 0; // the heap below needs a root
  let size = 0;
  for (let c = 0; c < count; c++) {
    const s = load<f32>(candScore + (<usize>c << 2));
    if (!isFinite<f32>(s)) continue;
    const ix = load<u32>(candIx + (<usize>c << 2));
    if (size < k) {
      store<f32>(outScore + (<usize>size << 2), s);
      store<u32>(outIx + (<usize>size << 2), ix);
      size++;
      if (size == k) for (let i = (k >> 1) - 1; i >= 0; i--) siftDownPairs(outIx, outScore, k, i);
    } else if (pairWorse(load<f32>(outScore), load<u32>(outIx), s, ix)) {
      store<f32>(outScore, s);
      store<u32>(outIx, ix);
      siftDownPairs(outIx, outScore, k, 0);
    }
  }
  if (size < k) for (let i = (size >> 1) - 1; i >= 0; i--) siftDownPairs(outIx, outScore, size, i);
  // Heap-sort in place: move the worst (the root) to the end, repeatedly.
  for (let end = size - 1; end > 0; end--) {
    const s = load<f32>(outScore);
    const ix = load<u32>(outIx);
    store<f32>(outScore, load<f32>(outScore + (<usize>end << 2)));
    store<u32>(outIx, load<u32>(outIx + (<usize>end << 2)));
    store<f32>(outScore + (<usize>end << 2), s);
    store<u32>(outIx + (<usize>end << 2), ix);
    siftDownPairs(outIx, outScore, end, 0);
  }
  return size;
}
