/**
 * @module recommend/item-ids
 * A catalog view's item ids by ix, and ix by (type, id), kept off the GC's heap: the ids as
 * UTF-8 in one arena with their offsets, the lookup an open-addressing table of ix. As an array of
 * strings they were 34 of the 41 MB of a ranking worker's old generation at 1,000,000 items (a
 * heap snapshot: 1,000,000 strings, 24 MB, and their array, 10.4 MB), walked by every marking
 * cycle. A request's few ids are decoded when its lists are written, a list's in one piece.
 */

/** No type: an ix the view holds no configured item for (never entered in the lookup). */
const NO_TYPE = 0xff;

/** FNV-1a over an item id's UTF-16 code units, seeded by its type's index. */
export function idHash(typeIx: number, id: string): number {
  let h = 0x811c9dc5 ^ typeIx;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export class ItemIds {
  /** Every id's UTF-8 bytes, back to back, in the order they were set. */
  #bytes = Buffer.allocUnsafeSlow(1 << 16);
  #used = 0;
  /** Per ix: where its id starts in #bytes, its byte length (0: none; ids are never empty), its type and hash. */
  #start = new Uint32Array(0);
  #length = new Uint16Array(0);
  #type = new Uint8Array(0);
  #hash = new Uint32Array(0);
  /** ix + 1 by a hash of type and id (0: free; at most half full). */
  #slots = new Int32Array(1024);
  #slotted = 0;
  /** join's scratch: a list's ids with separators, decoded once. */
  #joined = Buffer.allocUnsafeSlow(4096);

  /** Makes room for ix below `capacity`. */
  grow(capacity: number): void {
    if (capacity <= this.#start.length) return;
    const grown = <T extends Uint8Array | Uint16Array | Uint32Array>(old: T, made: T): T => {
      made.set(old as never);
      return made;
    };
    this.#start = grown(this.#start, new Uint32Array(capacity));
    this.#length = grown(this.#length, new Uint16Array(capacity));
    this.#type = grown(this.#type, new Uint8Array(capacity).fill(NO_TYPE));
    this.#hash = grown(this.#hash, new Uint32Array(capacity));
  }

  has(ix: number): boolean {
    return this.#length[ix]! > 0;
  }

  /**
   * Gives ix its id, of type `typeIx` (NO_TYPE or higher: not looked up by ixOf). Once: an ix keeps
   * its type and id for good (store/item-index.ts), so a second call changes nothing.
   */
  set(ix: number, typeIx: number, id: string): void {
    if (this.has(ix)) return;
    const room = 3 * id.length;
    if (this.#used + room > this.#bytes.length) {
      const bytes = Buffer.allocUnsafeSlow(Math.max(2 * this.#bytes.length, this.#used + room));
      this.#bytes.copy(bytes, 0, 0, this.#used);
      this.#bytes = bytes;
    }
    const n = this.#bytes.write(id, this.#used);
    this.#start[ix] = this.#used;
    this.#length[ix] = n;
    this.#used += n;
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
    const n = this.#length[ix];
    if (!n) return undefined;
    const start = this.#start[ix]!;
    return this.#bytes.toString('utf8', start, start + n);
  }

  /** The ix of an item of type `typeIx` with this id, or undefined. */
  ixOf(typeIx: number, id: string): number | undefined {
    const slots = this.#slots;
    const mask = slots.length - 1;
    for (let s = idHash(typeIx, id) & mask; ; s = (s + 1) & mask) {
      const ix = slots[s]! - 1;
      if (ix < 0) return undefined;
      if (this.#type[ix] === typeIx && this.#equals(ix, id)) return ix;
    }
  }

  /** Whether ix's id is `id`, compared in place: an ASCII id (the usual) byte by byte. */
  #equals(ix: number, id: string): boolean {
    const n = this.#length[ix]!;
    // Not ASCII on one side: the UTF-8 length differs from the UTF-16 one.
    if (n !== id.length) return n > id.length && this.idOf(ix) === id;
    const bytes = this.#bytes;
    const start = this.#start[ix]!;
    for (let i = 0; i < n; i++) {
      const c = id.charCodeAt(i);
      if (c !== bytes[start + i]) return false;
      // A code unit equal to a UTF-8 byte above ASCII can still belong to another id.
      if (c >= 0x80) return this.idOf(ix) === id;
    }
    return true;
  }

  /** The ids of `ixs` joined by `separator` (one ASCII character), decoded as one string. */
  join(ixs: readonly number[], separator: string): string {
    let need = 0;
    for (let i = 0; i < ixs.length; i++) need += this.#length[ixs[i]!]! + 1;
    if (need > this.#joined.length) this.#joined = Buffer.allocUnsafeSlow(2 * need);
    const out = this.#joined;
    const sep = separator.charCodeAt(0);
    let at = 0;
    for (let i = 0; i < ixs.length; i++) {
      if (i > 0) out[at++] = sep;
      // Byte by byte: ids are short, and a copy call per id costs more.
      const bytes = this.#bytes;
      const start = this.#start[ixs[i]!]!;
      const end = start + this.#length[ixs[i]!]!;
      for (let b = start; b < end; b++) out[at++] = bytes[b]!;
    }
    return out.toString('utf8', 0, at);
  }
}
