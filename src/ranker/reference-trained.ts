/**
 * @module ranker/reference-trained
 * The plain-TypeScript specification of the kernel's trainedTop (assembly/trained.ts): a user's
 * trained-model scores, Σ over seeds of weight × their row's entries, summed as a Float32Array
 * sums (f64 product and sum, rounded to f32), and the `max` best positive ones, strongest first.
 * Candidates are visited in order of first appearance, so equal scores resolve the same way in
 * both. The conformance suite (test/conformance/trained.test.ts) holds the kernel to it.
 */

export interface TrainedTopInput {
  /** Per seed: first arena entry, entry count, weight. */
  seedStart: Uint32Array;
  seedCount: Uint32Array;
  seedWeight: Float32Array;
  /** The rows read so far: entry e is (arenaColumn[e], arenaWeight[e]). */
  arenaColumn: Uint32Array;
  arenaWeight: Float32Array;
  /** Columns never returned. */
  exclude: Uint32Array;
  /** Item ix of each column. */
  items: Uint32Array;
  /** Columns whose ix is at or past this are left out (items the catalog view does not know yet). */
  catalogSize: number;
  max: number;
}

export function referenceTrainedTop(input: TrainedTopInput): { ix: Uint32Array; score: Float32Array } {
  const sums = new Map<number, number>();
  const sum = new Float32Array(1);
  for (let s = 0; s < input.seedStart.length; s++) {
    const weight = input.seedWeight[s]!;
    const end = input.seedStart[s]! + input.seedCount[s]!;
    for (let e = input.seedStart[s]!; e < end; e++) {
      sum[0] = (sums.get(input.arenaColumn[e]!) ?? 0) + weight * input.arenaWeight[e]!;
      sums.set(input.arenaColumn[e]!, sum[0]);
    }
  }
  for (const column of input.exclude) if (sums.has(column)) sums.set(column, -Infinity);
  // A min-heap of the best so far (root = weakest kept), as the kernel keeps it.
  const heapIx: number[] = [];
  const heapScore: number[] = [];
  for (const [column, score] of sums) {
    const size = heapIx.length;
    if (!(score > 0) || (size === input.max && !(score > heapScore[0]!))) continue;
    if (column >= input.items.length) continue;
    const ix = input.items[column]!;
    if (ix >= input.catalogSize) continue;
    let i: number;
    if (size < input.max) {
      i = size;
      heapIx.push(0);
      heapScore.push(0);
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (heapScore[parent]! <= score) break;
        heapIx[i] = heapIx[parent]!;
        heapScore[i] = heapScore[parent]!;
        i = parent;
      }
    } else {
      i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= size) break;
        if (child + 1 < size && heapScore[child + 1]! < heapScore[child]!) child++;
        if (heapScore[child]! >= score) break;
        heapIx[i] = heapIx[child]!;
        heapScore[i] = heapScore[child]!;
        i = child;
      }
    }
    heapIx[i] = ix;
    heapScore[i] = score;
  }
  // Strongest first; a stable insertion sort, as the kernel's.
  for (let i = 1; i < heapIx.length; i++) {
    const w = heapScore[i]!;
    const x = heapIx[i]!;
    let j = i - 1;
    while (j >= 0 && heapScore[j]! < w) {
      heapScore[j + 1] = heapScore[j]!;
      heapIx[j + 1] = heapIx[j]!;
      j--;
    }
    heapScore[j + 1] = w;
    heapIx[j + 1] = x;
  }
  return { ix: Uint32Array.from(heapIx), score: Float32Array.from(heapScore) };
}
