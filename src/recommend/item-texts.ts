/**
 * @module recommend/item-texts
 * One text per ix (an information field's values), off the GC's heap like the ids
 * (item-ids.ts): UTF-8 in one arena with per-ix offsets. Unlike an id, a value changes with its
 * item: a new value that fits is written over the old one, a longer one is appended, and the
 * arena is compacted once more than half of it is stale. As an array of strings a field was one
 * heap object per item, walked by every marking cycle of the ranking worker.
 */

/** No value (undefined), as distinct from an empty string. */
const NONE = -1;
/** Arena size under which stale bytes are left alone. */
const MIN_COMPACT_BYTES = 1 << 20;

export class ItemTexts {
  #bytes = Buffer.allocUnsafeSlow(1 << 12);
  #used = 0;
  /** Bytes of replaced and cleared values, reclaimed by #compact. */
  #stale = 0;
  /** Per ix: where its value starts in #bytes, and its byte length (NONE: no value). */
  #start = new Uint32Array(0);
  #length = new Int32Array(0);

  /** Makes room for ix below `capacity`. */
  grow(capacity: number): void {
    if (capacity <= this.#start.length) return;
    const start = new Uint32Array(capacity);
    start.set(this.#start);
    const length = new Int32Array(capacity).fill(NONE);
    length.set(this.#length);
    [this.#start, this.#length] = [start, length];
  }

  get(ix: number): string | undefined {
    const n = this.#length[ix] ?? NONE;
    if (n === NONE) return undefined;
    const start = this.#start[ix]!;
    return this.#bytes.toString('utf8', start, start + n);
  }

  set(ix: number, value: string | undefined): void {
    if (ix >= this.#length.length) this.grow(ix + 1);
    const held = this.#length[ix]!;
    if (typeof value !== 'string') {
      if (held > 0) this.#stale += held;
      this.#length[ix] = NONE;
      return;
    }
    // At most 3 bytes a UTF-16 code unit: a value that short fits where the old one was.
    if (held >= 3 * value.length) {
      const n = this.#bytes.write(value, this.#start[ix]!);
      this.#stale += held - n;
      this.#length[ix] = n;
      return;
    }
    if (held > 0) this.#stale += held;
    this.#length[ix] = NONE;
    if (this.#stale > this.#used / 2 && this.#used > MIN_COMPACT_BYTES) this.#compact();
    this.#room(3 * value.length);
    const n = this.#bytes.write(value, this.#used);
    this.#start[ix] = this.#used;
    this.#length[ix] = n;
    this.#used += n;
  }

  #room(bytes: number): void {
    if (this.#used + bytes <= this.#bytes.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(2 * this.#bytes.length, this.#used + bytes));
    this.#bytes.copy(grown, 0, 0, this.#used);
    this.#bytes = grown;
  }

  /** Copies the current values into a fresh arena, in ix order. */
  #compact(): void {
    const live = this.#used - this.#stale;
    const bytes = Buffer.allocUnsafeSlow(Math.max(1 << 12, Math.ceil(live * 1.5)));
    let at = 0;
    for (let ix = 0; ix < this.#length.length; ix++) {
      const n = this.#length[ix]!;
      if (n === NONE) continue;
      const start = this.#start[ix]!;
      this.#bytes.copy(bytes, at, start, start + n);
      this.#start[ix] = at;
      at += n;
    }
    [this.#bytes, this.#used, this.#stale] = [bytes, at, 0];
  }
}
