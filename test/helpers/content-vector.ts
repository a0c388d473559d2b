// An item's content vector in an array of its own (the service writes them into memory it reuses:
// ranker/content-vector.ts writeContentVector), for comparing what it stored or ranked with.
import type { Item } from '../../src/domain/item.ts';
import { writeContentVector } from '../../src/ranker/content-vector.ts';
import { VECTOR_DIM } from '../../src/ranker/reference-ranker.ts';

/** The item's content vector, or null when it has no content features (an all-zero row). */
export function contentVector(item: Item): Float32Array | null {
  const out = new Float32Array(VECTOR_DIM);
  return writeContentVector(item, out) ? out : null;
}
