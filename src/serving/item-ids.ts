/**
 * @module serving/item-ids
 * A catalog view's item ids by ix, and ix by (type, id), kept off the GC's heap: the ids in an
 * ItemTexts arena (UTF-8 with per-ix offsets), the lookup an open-addressing table of ix. As an array of
 * strings they were 34 of the 41 MB of a ranking worker's old generation at 1,000,000 items (a
 * heap snapshot: 1,000,000 strings, 24 MB, and their array, 10.4 MB), walked by every marking
 * cycle. A request's few ids are decoded when its lists are written, a list's in one piece.
 */

import { grown } from '../domain/grown.ts';
import { ItemTexts } from './item-texts.ts';

/** No type: an ix the view holds no configured item for (never entered in the lookup). */
const NO_TYPE = 0xff;

/** FNV-1a over an item id's UTF-16 code units, seeded by its type's index. */
export function idHash(typeIx: number, id: string): number {
  let h = 0x811c9dc5 ^ typeIx;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export class ItemIds {
  readonly #ids = new ItemTexts();
  /** Per ix: its type and the hash of its type and id (the lookup regrows without decoding). */
  #type = new Uint8Array(0);
  #hash = new Uint32Array(0);
  /** ix + 1 by a hash of type and id (0: free; at most half full). */
  #slots = new Int32Array(1024);
  #slotted = 0;

  /** Makes room for ix below `capacity`. */
  grow(capacity: number): void {
    const held = this.#type.length;
    if (capacity <= held) return;
    this.#ids.grow(capacity);
    this.#type = grown(this.#type, capacity);
    this.#type.fill(NO_TYPE, held);
    this.#hash = grown(this.#hash, capacity);
  }

  has(ix: number): boolean {
    return this.#ids.has(ix);
  }

  /**
   * Gives ix its id, of type `typeIx` (NO_TYPE or higher: not looked up by ixOf). Once: an ix keeps
   * its type and id for good (store/item-index.ts), so a second call changes nothing.
   */
  set(ix: number, typeIx: number, id: string): void {
    if (this.has(ix)) return;
    if (ix >= this.#type.length) this.grow(ix + 1);
    this.#ids.set(ix, id);
    if (typeIx >= NO_TYPE) return;
    this.#type[ix] = typeIx;
    this.#hash[ix] = idHash(typeIx, id);
    if (2 * (this.#slotted + 1) > this.#slots.length) {
      this.#slots = new Int32Array(this.#slots.length * 2);
      this.#slotted = 0;
      for (let held = 0; held < this.#type.length; held++) if (this.#type[held] !== NO_TYPE && held !== ix) this.#enter(held);
    }
    this.#enter(ix);
  }

  #enter(ix: number): void {
    const mask = this.#slots.length - 1;
    let s = this.#hash[ix]! & mask;
    while (this.#slots[s] !== 0) s = (s + 1) & mask;
    this.#slots[s] = ix + 1;
    this.#slotted++;
  }

  idOf(ix: number): string | undefined {
    return this.#ids.get(ix);
  }

  /** The ix of an item of type `typeIx` with this id, or undefined. */
  ixOf(typeIx: number, id: string): number | undefined {
    const slots = this.#slots;
    const mask = slots.length - 1;
    for (let s = idHash(typeIx, id) & mask; ; s = (s + 1) & mask) {
      const ix = slots[s]! - 1;
      if (ix < 0) return undefined;
      if (this.#type[ix] === typeIx && this.#ids.equals(ix, id)) return ix;
    }
  }

  /** The ids of `ixs` joined by `separator` (one ASCII character), decoded as one string. */
  join(ixs: readonly number[], separator: string): string {
    return this.#ids.join(ixs, separator);
  }
}
