/**
 * @module ranker/content-vector
 * Content vectors (the "title, description, categories, tags hashed into a fixed
 * dimension"): the signed hashing trick over weighted features, L2-normalised, so the dot
 * product of two vectors is their cosine similarity. Item-to-item lists use them for items with
 * no events yet. Deterministic and pure: the model builder stores them, a ranking worker may
 * recompute one for an item newer than the builder's last flush and gets the same values.
 */
import type { Item } from '../domain/item.ts';
import { VECTOR_DIM } from './reference-ranker.ts';

// Categories and tags are curated labels: they say more than any one word of free text.
const CATEGORY_WEIGHT = 3;
const TAG_WEIGHT = 2;
const TITLE_WEIGHT = 1;
const DESCRIPTION_WEIGHT = 0.5;
/** Words of the description read at most: its opening says what the item is about. */
const MAX_DESCRIPTION_WORDS = 200;
/** A letter or number at lastIndex (sticky): the test for non-ASCII characters of a word. */
const WORD_CHAR = /[\p{L}\p{N}]/uy;

/** FNV-1a, 32 bits: fast, and stable across processes and versions (unlike a seeded hash). */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The hash state after the word features' prefix `w:`: a word's hash continues from it. */
const WORD_HASH_START = fnv1a('w:');
const CATEGORY_HASH_START = fnv1a('c:');
const TAG_HASH_START = fnv1a('t:');
const SLASH = 0x2f;

/** Adds a hashed feature to the vector at `out[at]` to `out[at + VECTOR_DIM - 1]`. */
function addHashed(out: Float32Array, at: number, h: number, weight: number): void {
  // The top bit picks the sign so that colliding features cancel out on average.
  const d = at + (h % VECTOR_DIM);
  out[d] = out[d]! + (h & 0x80000000 ? -weight : weight);
}

function addFeature(out: Float32Array, at: number, feature: string, weight: number): void {
  addHashed(out, at, fnv1a(feature), weight);
}

/**
 * The features `w:<word>` of every run of 3 or more letters or numbers (code points) of the
 * lower-cased text, as matchAll(/[\p{L}\p{N}]{3,}/gu) finds them, hashed as they are scanned:
 * the regex, a string per word and a template string per feature cost more than the rest of a
 * PUT (catalog writes run this in the builder and in every ranking worker).
 */
function addWords(out: Float32Array, at: number, text: string | undefined, weight: number, maxWords: number): void {
  if (!text) return;
  const lower = text.toLowerCase();
  const end = lower.length;
  let n = 0;
  let h = WORD_HASH_START;
  let points = 0;
  for (let i = 0; i <= end; ) {
    const c = i < end ? lower.charCodeAt(i) : -1;
    let width = 0;
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39)) width = 1;
    else if (c >= 0x80) {
      WORD_CHAR.lastIndex = i;
      if (WORD_CHAR.test(lower)) width = WORD_CHAR.lastIndex - i;
    }
    if (width > 0) {
      for (let k = 0; k < width; k++) h = Math.imul(h ^ lower.charCodeAt(i + k), 0x01000193);
      points++;
      i += width;
      continue;
    }
    if (points >= 3) {
      addHashed(out, at, h >>> 0, weight);
      if (++n >= maxWords) return;
    }
    h = WORD_HASH_START;
    points = 0;
    i++;
  }
}

/**
 * `h` continued over the ASCII text lower-cased, or undefined at its first non-ASCII character
 * (whose lower case may depend on what surrounds it: the caller builds the string instead).
 */
function continueAsciiLower(h: number, text: string): number | undefined {
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0x80) return undefined;
    if (c >= 0x41 && c <= 0x5a) c |= 0x20;
    h = Math.imul(h ^ c, 0x01000193);
  }
  return h;
}

/**
 * The features `c:<the path's first d levels, joined by '/', lower-cased>` of every level d:
 * items in sibling subcategories share their parent's feature. Hashed level by level as the
 * path is scanned; the strings (three per level) were half of a vector's cost, which every
 * catalog change pays in the builder and in every ranking worker.
 */
function addCategoryPath(out: Float32Array, at: number, path: readonly string[]): void {
  let h: number | undefined = CATEGORY_HASH_START;
  for (let d = 1; d <= path.length; d++) {
    if (d > 1) h = Math.imul(h ^ SLASH, 0x01000193);
    h = continueAsciiLower(h, path[d - 1]!);
    if (h === undefined) {
      for (let k = d; k <= path.length; k++) addFeature(out, at, `c:${path.slice(0, k).join('/').toLowerCase()}`, CATEGORY_WEIGHT / k ** 0.5);
      return;
    }
    addHashed(out, at, h >>> 0, CATEGORY_WEIGHT / d ** 0.5);
  }
}

/**
 * Writes the item's content vector to `out[offset]` to `out[offset + VECTOR_DIM - 1]`; false (and
 * zeros there) when it has no content features. Into the caller's memory: a Float32Array per
 * item (its backing store outside the V8 heap) was most of the builder's garbage in a
 * 1,000,000-row file drop, where the builder keeps each changed item's vector until its flush.
 */
export function writeContentVector(item: Item, out: Float32Array, offset = 0): boolean {
  out.fill(0, offset, offset + VECTOR_DIM);
  for (const path of item.categories ?? []) addCategoryPath(out, offset, path);
  for (const tag of item.tags ?? []) {
    const h = continueAsciiLower(TAG_HASH_START, tag);
    if (h === undefined) addFeature(out, offset, `t:${tag.toLowerCase()}`, TAG_WEIGHT);
    else addHashed(out, offset, h >>> 0, TAG_WEIGHT);
  }
  addWords(out, offset, item.title, TITLE_WEIGHT, Infinity);
  addWords(out, offset, item.description, DESCRIPTION_WEIGHT, MAX_DESCRIPTION_WORDS);
  let norm = 0;
  for (let d = offset; d < offset + VECTOR_DIM; d++) norm += out[d]! * out[d]!;
  if (norm === 0) return false;
  const scale = 1 / Math.sqrt(norm);
  for (let d = offset; d < offset + VECTOR_DIM; d++) out[d]! *= scale;
  return true;
}
