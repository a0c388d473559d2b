/**
 * @module training/consumption-table
 * What a training pass keeps per (consumer, item): the strongest weight and the latest time at
 * it. Flat typed arrays in first-seen order with an open-addressing index on the pair, not a Map
 * of Maps per consumer: at 1,000,000 items (483,870 consumers, 7 million pairs) those maps took
 * 1.9 GB of heap, a trained build's peak (issue 11). Pure data, no I/O.
 */
import { grown } from '../domain/grown.ts';

const EMPTY = 0;

export class ConsumptionTable {
  /** Per entry: consumer index, item ix, strongest weight, latest unix sec at it. */
  who: Uint32Array;
  ix: Uint32Array;
  weight: Float64Array;
  sec: Uint32Array;
  length = 0;
  /** Entry + 1 by hashed (consumer, ix), EMPTY where free; at most half full. */
  #slots: Int32Array;

  constructor(capacity = 1024) {
    this.who = new Uint32Array(capacity);
    this.ix = new Uint32Array(capacity);
    this.weight = new Float64Array(capacity);
    this.sec = new Uint32Array(capacity);
    let slots = 16;
    while (slots < capacity * 2) slots *= 2;
    this.#slots = new Int32Array(slots);
  }

  /** Records a consumption: a stronger weight replaces the kept one; an equal one keeps the latest time. */
  note(who: number, ix: number, weight: number, sec: number): void {
    const mask = this.#slots.length - 1;
    for (let s = hashOf(who, ix) & mask; ; s = (s + 1) & mask) {
      const entry = this.#slots[s]! - 1;
      if (entry < 0) {
        this.#add(s, who, ix, weight, sec);
        return;
      }
      if (this.who[entry] !== who || this.ix[entry] !== ix) continue;
      if (weight > this.weight[entry]!) [this.weight[entry], this.sec[entry]] = [weight, sec];
      else if (weight === this.weight[entry]! && sec > this.sec[entry]!) this.sec[entry] = sec;
      return;
    }
  }

  #add(slot: number, who: number, ix: number, weight: number, sec: number): void {
    const e = this.length++;
    if (e === this.who.length) {
      const capacity = Math.max(16, e * 2);
      this.who = grown(this.who, capacity);
      this.ix = grown(this.ix, capacity);
      this.weight = grown(this.weight, capacity);
      this.sec = grown(this.sec, capacity);
    }
    this.who[e] = who;
    this.ix[e] = ix;
    this.weight[e] = weight;
    this.sec[e] = sec;
    this.#slots[slot] = e + 1;
    if (this.length * 2 > this.#slots.length) this.#rehash(this.#slots.length * 2);
  }

  #rehash(size: number): void {
    const slots = new Int32Array(size);
    const mask = size - 1;
    for (let e = 0; e < this.length; e++) {
      let s = hashOf(this.who[e]!, this.ix[e]!) & mask;
      while (slots[s] !== EMPTY) s = (s + 1) & mask;
      slots[s] = e + 1;
    }
    this.#slots = slots;
  }
}

function hashOf(who: number, ix: number): number {
  let h = Math.imul(who, 0x9e3779b1) ^ Math.imul(ix + 0x632be5ab, 0x85ebca77);
  h ^= h >>> 15;
  return Math.imul(h, 0x2c1b3c6d) >>> 0;
}
