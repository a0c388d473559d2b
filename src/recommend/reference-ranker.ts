/**
 * @module recommend/reference-ranker
 * The Ranker role and its plain-TypeScript reference implementation: the specification the WASM
 * kernel is held to (test/conformance). Clarity over speed here.
 */

export interface Ranker {
  /** A buffer with room for `n` scores; write candidates' scores into it. */
  scoresBuffer(n: number): Float32Array;
  /**
   * Indices of the `k` best of the first `n` scores, best first; equal scores keep the lower
   * index first; non-finite scores (filtered candidates) are never selected. Valid until the
   * next call.
   */
  selectTopK(n: number, k: number): Uint32Array;
}

export class ReferenceRanker implements Ranker {
  #scores = new Float32Array(0);

  scoresBuffer(n: number): Float32Array {
    if (this.#scores.length < n) this.#scores = new Float32Array(n);
    return this.#scores.subarray(0, n);
  }

  selectTopK(n: number, k: number): Uint32Array {
    const scores = this.#scores;
    const candidates: number[] = [];
    for (let i = 0; i < n; i++) if (Number.isFinite(scores[i]!)) candidates.push(i);
    candidates.sort((a, b) => scores[b]! - scores[a]! || a - b);
    return Uint32Array.from(candidates.slice(0, Math.max(0, k)));
  }
}
