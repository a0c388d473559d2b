/**
 * @module model/lag-histogram
 * Millisecond histogram of how long events wait between their 200 and the builder's commit:
 * the real-time contract (≤ 1 s at p99) is read off it. Fixed 1 ms buckets up to 60 s.
 */

const MAX_MS = 60_000;

export interface LagSummary {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export class LagHistogram {
  readonly #buckets = new Uint32Array(MAX_MS + 1);
  #count = 0;
  #max = 0;

  record(lagMs: number): void {
    const b = Math.min(MAX_MS, Math.max(0, Math.round(lagMs)));
    this.#buckets[b]!++;
    this.#count++;
    if (lagMs > this.#max) this.#max = lagMs;
  }

  #quantile(q: number): number {
    if (this.#count === 0) return 0;
    const rank = Math.ceil(q * this.#count);
    let seen = 0;
    for (let b = 0; b <= MAX_MS; b++) {
      seen += this.#buckets[b]!;
      if (seen >= rank) return b;
    }
    return MAX_MS;
  }

  summary(): LagSummary {
    return { count: this.#count, p50Ms: this.#quantile(0.5), p99Ms: this.#quantile(0.99), maxMs: Math.round(this.#max) };
  }
}
