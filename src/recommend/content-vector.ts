/**
 * @module recommend/content-vector
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
const WORD = /[\p{L}\p{N}]{3,}/gu;

/** FNV-1a, 32 bits: fast, and stable across processes and versions (unlike a seeded hash). */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function addFeature(vector: Float32Array, feature: string, weight: number): void {
  const h = fnv1a(feature);
  // The top bit picks the sign so that colliding features cancel out on average.
  const d = h % VECTOR_DIM;
  vector[d] = vector[d]! + (h & 0x80000000 ? -weight : weight);
}

function addWords(vector: Float32Array, text: string | undefined, weight: number, maxWords: number): void {
  if (!text) return;
  let n = 0;
  for (const [word] of text.toLowerCase().matchAll(WORD)) {
    addFeature(vector, `w:${word}`, weight);
    if (++n >= maxWords) break;
  }
}

/** The item's content vector, or null when it has no content features (an all-zero row). */
export function contentVector(item: Item): Float32Array | null {
  const vector = new Float32Array(VECTOR_DIM);
  for (const path of item.categories ?? []) {
    // Every level: items in sibling subcategories share their parent's feature.
    for (let d = 1; d <= path.length; d++) addFeature(vector, `c:${path.slice(0, d).join('/').toLowerCase()}`, CATEGORY_WEIGHT / d ** 0.5);
  }
  for (const tag of item.tags ?? []) addFeature(vector, `t:${tag.toLowerCase()}`, TAG_WEIGHT);
  addWords(vector, item.title, TITLE_WEIGHT, Infinity);
  addWords(vector, item.description, DESCRIPTION_WEIGHT, MAX_DESCRIPTION_WORDS);
  let norm = 0;
  for (let d = 0; d < VECTOR_DIM; d++) norm += vector[d]! * vector[d]!;
  if (norm === 0) return null;
  const scale = 1 / Math.sqrt(norm);
  for (let d = 0; d < VECTOR_DIM; d++) vector[d]! *= scale;
  return vector;
}
