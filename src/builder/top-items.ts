/**
 * @module builder/top-items
 * The best `size` items of a score array (score descending, index ascending on ties), kept up to
 * date from the items whose scores changed instead of a scan of the catalog. Scores may only
 * grow between two full selections (`select`); `update` then needs the current members and the
 * changed items alone: an unchanged item outside the list stays below it. The `popular` and
 * `trending` lists were selected by every ranking worker from the whole arrays once a second
 * while events arrived (~4 ms at 100,000 items, ~70 ms at 1,000,000, on a serving thread); the
 * builder now keeps them here and writes them as two small records (store/model-layout.ts topItemsKey).
 */
import { grown } from '../domain/grown.ts';

export class TopItems {
  readonly #size: number;
  #ix: number[] = [];
  /** 1 for members and for items already noted as changed since the last update. */
  #marked = new Uint8Array(0);
  /** Changed items that were not members. */
  #changed: number[] = [];
  #dirty = false;

  constructor(size: number) {
    this.#size = size;
  }

  /** Notes that `ix`'s score grew. */
  changed(ix: number): void {
    this.#dirty = true;
    if (ix >= this.#marked.length) this.#marked = grown(this.#marked, Math.max(ix + 1, 2 * this.#marked.length));
    if (this.#marked[ix] === 1) return;
    this.#marked[ix] = 1;
    this.#changed.push(ix);
  }

  /** Whether any score changed since the last update or selection. */
  get pending(): boolean {
    return this.#dirty;
  }

  /** Merges the changed items into the list; returns whether it changed. */
  update(scores: Float32Array): boolean {
    if (!this.#dirty) return false;
    this.#dirty = false;
    const candidates = this.#ix;
    const full = candidates.length >= this.#size;
    // The members' scores grew too: the cut is the lowest of them now.
    let floor = Infinity;
    if (full) for (const ix of candidates) floor = Math.min(floor, scores[ix]!);
    for (const ix of this.#changed) {
      const score = scores[ix] ?? 0;
      if (score > 0 && (!full || score >= floor)) candidates.push(ix);
      else this.#marked[ix] = 0;
    }
    this.#changed.length = 0;
    this.#rank(candidates, scores);
    return true;
  }

  /** Selects the list anew from every score (the scores may have fallen: a new hour's decay). */
  select(scores: Float32Array): void {
    for (const ix of this.#ix) this.#marked[ix] = 0;
    for (const ix of this.#changed) this.#marked[ix] = 0;
    this.#changed.length = 0;
    this.#dirty = false;
    let positive = 0;
    for (let ix = 0; ix < scores.length; ix++) if (scores[ix]! > 0) positive++;
    // Past a few times the list's size, a numeric sort of the scores alone finds the cut first.
    let floor = 0;
    if (positive > 4 * this.#size) {
      const values = new Float32Array(positive);
      for (let ix = 0, n = 0; ix < scores.length; ix++) if (scores[ix]! > 0) values[n++] = scores[ix]!;
      values.sort();
      floor = values[positive - this.#size]!;
    }
    const candidates: number[] = [];
    for (let ix = 0; ix < scores.length; ix++) if (scores[ix]! > 0 && scores[ix]! >= floor) candidates.push(ix);
    if (scores.length > this.#marked.length) this.#marked = grown(this.#marked, scores.length);
    this.#rank(candidates, scores);
  }

  #rank(candidates: number[], scores: Float32Array): void {
    candidates.sort((a, b) => scores[b]! - scores[a]! || a - b);
    const kept: number[] = [];
    for (const ix of candidates) {
      if (kept.length < this.#size) {
        kept.push(ix);
        this.#marked[ix] = 1;
      } else this.#marked[ix] = 0;
    }
    this.#ix = kept;
  }

  /** The list as stored: n, then n u32 indices, then their n f32 scores. */
  encode(scores: Float32Array): Buffer {
    const n = this.#ix.length;
    const out = Buffer.alloc(4 + 8 * n);
    out.writeUInt32LE(n, 0);
    for (let i = 0; i < n; i++) {
      out.writeUInt32LE(this.#ix[i]!, 4 + 4 * i);
      out.writeFloatLE(scores[this.#ix[i]!]!, 4 + 4 * n + 4 * i);
    }
    return out;
  }
}
