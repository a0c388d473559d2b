/**
 * @module serving/item-texts
 * One text per ix (an item's id, an information field's values), off the GC's heap: UTF-8 in one
 * arena with per-ix offsets. A new value that fits is written over the old one, a longer one is
 * appended, and the arena is compacted once more than half of it is stale (ids never change, so
 * theirs never is). As arrays of strings they were one heap object per item, walked by every
 * marking cycle of the ranking worker.
 */
import { grown } from '../domain/grown.ts';


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
  /** join's scratch: a list's texts with separators, decoded once. */
  #joined = Buffer.allocUnsafeSlow(4096);

  /** Makes room for ix below `capacity`. */
  grow(capacity: number): void {
    const held = this.#start.length;
    if (capacity <= held) return;
    this.#start = grown(this.#start, capacity);
    this.#length = grown(this.#length, capacity);
    this.#length.fill(NONE, held);
  }

  has(ix: number): boolean {
    return (this.#length[ix] ?? NONE) !== NONE;
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

  /** Whether ix's text is `text`, compared in place: an ASCII one (the usual) byte by byte. */
  equals(ix: number, text: string): boolean {
    const n = this.#length[ix] ?? NONE;
    if (n === NONE) return false;
    // Not ASCII on one side: the UTF-8 length differs from the UTF-16 one.
    if (n !== text.length) return n > text.length && this.get(ix) === text;
    const bytes = this.#bytes;
    const start = this.#start[ix]!;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c !== bytes[start + i]) return false;
      // A code unit equal to a UTF-8 byte above ASCII can still belong to another text.
      if (c >= 0x80) return this.get(ix) === text;
    }
    return true;
  }

  /** The texts of `ixs` joined by `separator` (one ASCII character), decoded as one string; none reads as empty. */
  join(ixs: readonly number[], separator: string): string {
    let need = 0;
    for (let i = 0; i < ixs.length; i++) need += Math.max(0, this.#length[ixs[i]!]!) + 1;
    if (need > this.#joined.length) this.#joined = Buffer.allocUnsafeSlow(2 * need);
    const out = this.#joined;
    const bytes = this.#bytes;
    const sep = separator.charCodeAt(0);
    let at = 0;
    for (let i = 0; i < ixs.length; i++) {
      if (i > 0) out[at++] = sep;
      // Byte by byte: ids are short, and a copy call per text costs more.
      const start = this.#start[ixs[i]!]!;
      const end = start + Math.max(0, this.#length[ixs[i]!]!);
      for (let b = start; b < end; b++) out[at++] = bytes[b]!;
    }
    return out.toString('utf8', 0, at);
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
