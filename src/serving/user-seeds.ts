/**
 * @module serving/user-seeds
 * One request's view of its user in reused typed memory: the seeds (distinct items with the
 * strongest weight and the latest time seen) and which items are consumed or reconsumable.
 * Membership is an epoch stamp per item ix, so starting a request is one increment and no Map,
 * Set or tuple is allocated per history entry (a history is up to model.historyLength entries,
 * and the Map of tuples it replaced was a steady share of a ranking worker's garbage).
 */
import { grown } from '../domain/grown.ts';

export class UserSeeds {
  /** Seeds in the order first seen: ix, weight, unix sec (0 = now). */
  ix = new Uint32Array(256);
  weight = new Float32Array(256);
  time = new Uint32Array(256);
  count = 0;
  /** Per ix: the epoch it was last marked in; a seed's index in #slot. */
  #seedEpoch = new Uint32Array(0);
  #slot = new Uint32Array(0);
  #consumedEpoch = new Uint32Array(0);
  #reconsumableEpoch = new Uint32Array(0);
  #epoch = 0;

  /** Starts a request over a catalog of `capacity` ix. */
  reset(capacity: number): void {
    this.#ensure(capacity);
    this.count = 0;
    if (++this.#epoch === 0xffffffff) {
      // Wrapped: forget every stamp rather than mistake an old one for this request's.
      this.#seedEpoch.fill(0);
      this.#consumedEpoch.fill(0);
      this.#reconsumableEpoch.fill(0);
      this.#epoch = 1;
    }
  }

  /** Stamps for ix 0 .. capacity − 1 (an item newer than the catalog view may come in a history). */
  #ensure(capacity: number): void {
    if (this.#seedEpoch.length >= capacity) return;
    const size = Math.max(capacity, this.#seedEpoch.length * 2);
    this.#seedEpoch = grown(this.#seedEpoch, size);
    this.#slot = grown(this.#slot, size);
    this.#consumedEpoch = grown(this.#consumedEpoch, size);
    this.#reconsumableEpoch = grown(this.#reconsumableEpoch, size);
  }

  /** Adds an item seen with `weight` at `time`: a repeat keeps the strongest weight and the latest time (0 = now wins). */
  add(ix: number, weight: number, time: number): void {
    this.#ensure(ix + 1);
    if (this.#seedEpoch[ix] === this.#epoch) {
      const s = this.#slot[ix]!;
      if (weight > this.weight[s]!) this.weight[s] = weight;
      const was = this.time[s]!;
      this.time[s] = was === 0 || time === 0 ? 0 : Math.max(was, time);
      return;
    }
    if (this.count === this.ix.length) {
      this.ix = grown(this.ix, this.count * 2);
      this.weight = grown(this.weight, this.count * 2);
      this.time = grown(this.time, this.count * 2);
    }
    this.#seedEpoch[ix] = this.#epoch;
    this.#slot[ix] = this.count;
    this.ix[this.count] = ix;
    this.weight[this.count] = weight;
    this.time[this.count++] = time;
  }

  markConsumed(ix: number): void {
    this.#ensure(ix + 1);
    this.#consumedEpoch[ix] = this.#epoch;
  }

  markReconsumable(ix: number): void {
    this.#ensure(ix + 1);
    this.#reconsumableEpoch[ix] = this.#epoch;
  }

  isConsumed(ix: number): boolean {
    return ix < this.#consumedEpoch.length && this.#consumedEpoch[ix] === this.#epoch;
  }

  isReconsumable(ix: number): boolean {
    return ix < this.#reconsumableEpoch.length && this.#reconsumableEpoch[ix] === this.#epoch;
  }

  /**
   * The indices (into ix/weight/time) of the `max` most recent seeds, most recent first (time 0
   * = now, newest of all); of seeds with the same time the one seen later counts as newer, as
   * histories are added oldest first. Times are whole seconds: events posted in a burst share
   * one, and the first seen of them won before, so a user who sent 80 events in a second was
   * seeded by the oldest of them, and which ones depended on where the second's boundaries fell
   * (the wall clock). Written into `out`; returns how many.
   */
  mostRecent(max: number, out: Uint32Array): number {
    let kept = 0;
    const recency = (s: number) => this.time[s]! || Infinity;
    for (let s = 0; s < this.count; s++) {
      const r = recency(s);
      if (kept === max && r < recency(out[kept - 1]!)) continue;
      let at = kept < max ? kept++ : kept - 1;
      while (at > 0 && recency(out[at - 1]!) <= r) {
        out[at] = out[at - 1]!;
        at--;
      }
      out[at] = s;
    }
    return kept;
  }
}
