/**
 * @module domain/grown
 * A typed array's growth: the builder, the trainer and the ranking workers keep growable typed
 * buffers (no object per entry for the GC to trace) and grew them with five near-copies.
 */

type Growable = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float32Array | Float64Array;

/** A new array of `size` (same type) holding `a`'s first `used` entries (default all). */
export function grown<T extends Growable>(a: T, size: number, used = a.length): T {
  const out = new (a.constructor as new (n: number) => T)(size);
  out.set(a.subarray(0, Math.min(used, size)) as never);
  return out;
}

/**
 * The length an array holding `n` grows to: a quarter more, at least `least`. Doubling left up to
 * half of each one unused (a ranking worker's item-key pool at 1,000,000 items: 33.6 MB for 20 MB
 * of ids).
 */
export const quarterMore = (n: number, least: number): number => Math.max(least, n + (n >>> 2));

/** `a` when it holds `n` entries, else a new array of its kind for at least `n` (contents not kept: scratch memory refilled per use). */
export function withRoom<T extends Growable>(a: T, n: number): T {
  return a.length >= n ? a : new (a.constructor as new (n: number) => T)(Math.max(n, 2 * a.length));
}
