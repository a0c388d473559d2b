// Seeded randomness for the synthetic data set: a mulberry32 stream (Math.random cannot be
// seeded), Zipf-like cumulative tables and their binary-search sampler. No I/O, no Math.random.

/** A stream of uniform floats in [0, 1). */
export type Random = () => number;

/**
 * mulberry32: 32-bit state, passes gjrand/PractRand to 2^32 outputs, enough for a data set of a
 * few million draws. Streams with different `seed`s are independent for this purpose.
 */
export function mulberry32(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A sub-stream of `seed` for one purpose, so adding draws to one part never shifts another. */
export function stream(seed: number, purpose: number): Random {
  return mulberry32(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(purpose + 1, 0xc2b2ae35));
}

/** Integer in [0, n). */
export function pickIndex(random: Random, n: number): number {
  return Math.floor(random() * n);
}

/** One element of a non-empty array. */
export function pick<T>(random: Random, values: readonly T[]): T {
  return values[Math.floor(random() * values.length)]!;
}

/** A random permutation of 0..n-1 (Fisher–Yates). */
export function permutation(random: Random, n: number): Uint32Array {
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const t = out[i]!;
    out[i] = out[j]!;
    out[j] = t;
  }
  return out;
}

/**
 * Index in [start, end) of the first cumulative weight above `target`: with `cum` ascending,
 * index i is drawn with probability proportional to its own weight. `end > start`.
 */
export function searchCumulative(cum: Float64Array, start: number, end: number, target: number): number {
  let lo = start;
  let hi = end - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cum[mid]! > target) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
