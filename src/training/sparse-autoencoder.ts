/**
 * @module training/sparse-autoencoder
 * The trained model as sparse item-to-item rows over every item with at least two users, so
 * that serving it costs what serving co-occurrence costs (a few hundred weights per seed) and
 * its build grows with the catalog, not with its cube:
 *
 * - **Head** (the `denseItems` most consumed items): the dense DLAE/EASE of linear-autoencoder.ts,
 *   each row then pruned to its `rowLength` largest weights by magnitude. Negative weights are
 *   kept: on MovieLens 100k, keeping the 200 largest |w| per row lost 0.005 of P@10 against the
 *   dense model (0.4234 vs 0.4287); keeping only the 200 largest positive ones lost 0.014.
 * - **Tail** (every other item with ≥ 2 users): item j's column of B is the same regression
 *   restricted to j and its `neighbourhood` strongest co-occurring items (a local DLAE; the
 *   Gram entries it needs come from each item's pruned co-occurrence row). On MovieLens 100k
 *   the local model alone reached P@10 0.392 with 64 neighbours and 0.421 with 256.
 *
 * A tail item in no other item's neighbourhood takes its own column's weights as its row. Weights
 * of both parts are coefficients of one objective, so they add up in one score. Pure
 * computation: no I/O, no threads (the trainer worker runs it).
 */
import type { SparseRows } from '../store/trained-model.ts';
import { selectLargest, sortByKey } from '../domain/select-largest.ts';
import { type AutoencoderOptions, type InteractionRows, trainAutoencoder } from './linear-autoencoder.ts';

export interface SparseModelOptions extends AutoencoderOptions {
  /** Columns 0 .. denseItems − 1 (the most consumed) are learned jointly: O(n³), 12·n² bytes. */
  denseItems: number;
  /** Weights kept per row (per seed item), largest magnitude first. */
  rowLength: number;
  /** Co-occurring items a tail item's column is regressed on. */
  neighbourhood: number;
}

/**
 * Most (seed, column, weight) entries a build makes: each head row's `rowLength` largest, and
 * each tail column's weights on its `neighbourhood` items.
 */
function entryBound(n: number, options: Pick<SparseModelOptions, 'denseItems' | 'rowLength' | 'neighbourhood'>): number {
  const head = Math.min(n, options.denseItems);
  return head * Math.min(options.rowLength, Math.max(0, head - 1)) + (n - head) * options.neighbourhood;
}

/**
 * Bytes of working memory a sparse model needs at most: the dense head, the pruned Gram rows, and
 * per entry its triplet (12), its place in the row sort (4) and its output (8) twice (rows, then
 * rows with own columns). At 1,000,000 items (452,869 columns) a build peaked at 2.4 GB of RSS
 * when this counted rowLength weights per item and entries were kept twice (issue 11).
 */
export function sparseModelBytes(n: number, interactions: number, options: Pick<SparseModelOptions, 'denseItems' | 'rowLength' | 'neighbourhood'>): number {
  const head = Math.min(n, options.denseItems);
  const tail = n - head;
  const gram = tail > 0 ? n * options.neighbourhood * 2 * 8 + n * 24 + interactions * 8 : 0;
  return head * head * 12 + gram + entryBound(n, options) * 32;
}

/** Rows of the head columns only, for the dense solve. */
function headRows(rows: InteractionRows, head: number): InteractionRows {
  const offsets = new Uint32Array(rows.offsets.length);
  let kept = 0;
  for (let e = 0; e < rows.cols.length; e++) if (rows.cols[e]! < head) kept++;
  const cols = new Uint32Array(kept);
  const values = new Float32Array(kept);
  let k = 0;
  for (let u = 0; u + 1 < rows.offsets.length; u++) {
    for (let e = rows.offsets[u]!; e < rows.offsets[u + 1]!; e++) {
      if (rows.cols[e]! >= head) continue;
      cols[k] = rows.cols[e]!;
      values[k++] = rows.values[e]!;
    }
    offsets[u + 1] = k;
  }
  return { offsets, cols, values };
}

/** Item → users (column-major view of the rows): `users/values[offsets[i] .. offsets[i + 1])`. */
function byItem(rows: InteractionRows, n: number): { offsets: Uint32Array; users: Uint32Array; values: Float32Array } {
  const offsets = new Uint32Array(n + 1);
  for (let e = 0; e < rows.cols.length; e++) offsets[rows.cols[e]! + 1]!++;
  for (let i = 0; i < n; i++) offsets[i + 1]! += offsets[i]!;
  const fill = offsets.slice(0, n);
  const users = new Uint32Array(rows.cols.length);
  const values = new Float32Array(rows.cols.length);
  for (let u = 0; u + 1 < rows.offsets.length; u++) {
    for (let e = rows.offsets[u]!; e < rows.offsets[u + 1]!; e++) {
      const at = fill[rows.cols[e]!]!++;
      users[at] = u;
      values[at] = rows.values[e]!;
    }
  }
  return { offsets, users, values };
}

/**
 * Each item's `width` largest co-occurrence (Gram) entries off the diagonal, and the diagonal:
 * Σ over users of (their item count)² steps, through one dense accumulator reused for every item.
 */
function prunedGram(rows: InteractionRows, n: number, width: number) {
  const items = byItem(rows, n);
  const diag = new Float64Array(n);
  const cols = new Uint32Array(n * width);
  const values = new Float32Array(n * width);
  const counts = new Uint32Array(n);
  const acc = new Float64Array(n);
  const touched = new Uint32Array(n);
  const key = (i: number) => acc[i]!;
  for (let a = 0; a < n; a++) {
    let t = 0;
    for (let p = items.offsets[a]!; p < items.offsets[a + 1]!; p++) {
      const u = items.users[p]!;
      const xa = items.values[p]!;
      diag[a]! += xa * xa;
      for (let e = rows.offsets[u]!; e < rows.offsets[u + 1]!; e++) {
        const b = rows.cols[e]!;
        if (b === a) continue;
        if (acc[b] === 0) touched[t++] = b;
        acc[b]! += xa * rows.values[e]!;
      }
    }
    const kept = Math.min(width, t);
    selectLargest(touched, t, kept, key);
    sortByKey(touched, kept, key);
    for (let k = 0; k < kept; k++) {
      cols[a * width + k] = touched[k]!;
      values[a * width + k] = acc[touched[k]!]!;
    }
    counts[a] = kept;
    for (let k = 0; k < t; k++) acc[touched[k]!] = 0;
  }
  return { diag, cols, values, counts, width };
}

/** Solves A·x = b in place for a symmetric positive-definite m × m A (row-major, lower triangle read); false when not SPD. */
function choleskySolve(a: Float64Array, b: Float64Array, m: number): boolean {
  for (let i = 0; i < m; i++) {
    const ib = i * m;
    for (let k = 0; k < i; k++) {
      const kb = k * m;
      let s = a[ib + k]!;
      for (let q = 0; q < k; q++) s -= a[ib + q]! * a[kb + q]!;
      a[ib + k] = s / a[kb + k]!;
    }
    let s = a[ib + i]!;
    for (let q = 0; q < i; q++) s -= a[ib + q]! * a[ib + q]!;
    if (!(s > 0)) return false;
    a[ib + i] = Math.sqrt(s);
  }
  for (let i = 0; i < m; i++) {
    let s = b[i]!;
    for (let q = 0; q < i; q++) s -= a[i * m + q]! * b[q]!;
    b[i] = s / a[i * m + i]!;
  }
  for (let i = m - 1; i >= 0; i--) {
    let s = b[i]!;
    for (let q = i + 1; q < m; q++) s -= a[q * m + i]! * b[q]!;
    b[i] = s / a[i * m + i]!;
  }
  return true;
}

/** (seed, column, weight) triplets, sized once for what a build can make (entryBound). */
class Entries {
  seed: Uint32Array;
  col: Uint32Array;
  weight: Float32Array;
  length = 0;

  constructor(capacity: number) {
    this.seed = new Uint32Array(capacity);
    this.col = new Uint32Array(capacity);
    this.weight = new Float32Array(capacity);
  }

  push(seed: number, col: number, weight: number): void {
    this.seed[this.length] = seed;
    this.col[this.length] = col;
    this.weight[this.length++] = weight;
  }
}

/**
 * Tail columns j ≥ head: B[S, j] from j's local regression over S = {j} ∪ its strongest
 * co-occurring items. Column j's entries are pushed together: `out[columnStart[j] .. columnStart[j + 1])`.
 */
function localColumns(rows: InteractionRows, n: number, head: number, options: SparseModelOptions, out: Entries): Uint32Array {
  const m = options.neighbourhood;
  const gram = prunedGram(rows, n, m * 2);
  const dropoutScale = options.method === 'dlae' ? options.dropout / (1 - options.dropout) : 0;
  const position = new Int32Array(n).fill(-1);
  const support = new Uint32Array(m + 1);
  const a = new Float64Array((m + 1) * (m + 1));
  const x = new Float64Array(m + 1);
  const columnStart = new Uint32Array(n + 1).fill(out.length);
  for (let j = head; j < n; j++) {
    columnStart[j] = out.length;
    const neighbours = Math.min(m, gram.counts[j]!);
    if (neighbours === 0) continue;
    support[0] = j;
    for (let k = 0; k < neighbours; k++) support[k + 1] = gram.cols[j * gram.width + k]!;
    const size = neighbours + 1;
    for (let i = 0; i < size; i++) position[support[i]!] = i;
    a.fill(0, 0, size * size);
    for (let i = 0; i < size; i++) {
      const item = support[i]!;
      const g = gram.diag[item]!;
      a[i * size + i] = g + dropoutScale * g + options.l2;
      for (let k = 0; k < gram.counts[item]!; k++) {
        const other = position[gram.cols[item * gram.width + k]!]!;
        if (other < 0 || other === i) continue;
        // Pruned rows are not symmetric: an entry found from either side fills both.
        const v = gram.values[item * gram.width + k]!;
        a[i * size + other] = v;
        a[other * size + i] = v;
      }
    }
    // The right-hand side is j's Gram column: row 0 of A, without the penalty on the diagonal.
    for (let i = 0; i < size; i++) x[i] = i === 0 ? gram.diag[j]! : a[i]!;
    const solved = choleskySolve(a, x, size);
    for (let i = 0; i < size; i++) position[support[i]!] = -1;
    if (!solved) continue;
    for (let i = 1; i < size; i++) {
      if (x[i] === 0) continue;
      out.push(support[i]!, j, x[i]!);
    }
  }
  columnStart[n] = out.length;
  return columnStart;
}

/** The sparse model: per column, its rowLength largest-magnitude weights on other columns. */
export function trainSparseAutoencoder(rows: InteractionRows, n: number, options: SparseModelOptions): SparseRows {
  const head = Math.min(n, options.denseItems);
  const entries = new Entries(entryBound(n, options));
  if (head > 0) {
    const b = trainAutoencoder(headRows(rows, head), head, options);
    const idx = new Uint32Array(head);
    for (let s = 0; s < head; s++) {
      const base = s * head;
      const key = (j: number) => (j === s ? -1 : Math.abs(b[base + j]!));
      for (let j = 0; j < head; j++) idx[j] = j;
      const kept = Math.min(options.rowLength, head - 1);
      selectLargest(idx, head, kept, key);
      for (let k = 0; k < kept; k++) if (idx[k] !== s && b[base + idx[k]!] !== 0) entries.push(s, idx[k]!, b[base + idx[k]!]!);
    }
  }
  if (head === n) return rowsOf(entries, n, options.rowLength);
  const columnStart = localColumns(rows, n, head, options, entries);
  return withOwnColumns(rowsOf(entries, n, options.rowLength), entries, columnStart, options.rowLength);
}

/**
 * A tail item in no other item's neighbourhood would have no row (nothing for its
 * more_like_this, nothing from it in a history): it takes the weights of its own column
 * instead, the items that predict it, as the closest stand-in for the items it predicts. Read
 * in place from the column's entries: a mirrored copy of every entry cost 0.35–0.7 GB at
 * 1,000,000 items.
 */
function withOwnColumns(rows: SparseRows, entries: Entries, columnStart: Uint32Array, rowLength: number): SparseRows {
  const n = rows.offsets.length - 1;
  const offsets = new Uint32Array(n + 1);
  const rowOf = (s: number) => rows.offsets[s + 1]! - rows.offsets[s]!;
  for (let s = 0; s < n; s++) offsets[s + 1] = offsets[s]! + (rowOf(s) || Math.min(rowLength, columnStart[s + 1]! - columnStart[s]!));
  if (offsets[n] === rows.offsets[n]) return rows;
  const cols = new Uint32Array(offsets[n]!);
  const weights = new Float32Array(offsets[n]!);
  let longest = 0;
  for (let s = 0; s < n; s++) longest = Math.max(longest, columnStart[s + 1]! - columnStart[s]!);
  const order = new Uint32Array(longest);
  const key = (e: number) => Math.abs(entries.weight[e]!);
  for (let s = 0; s < n; s++) {
    if (rowOf(s) > 0) {
      cols.set(rows.cols.subarray(rows.offsets[s]!, rows.offsets[s + 1]!), offsets[s]!);
      weights.set(rows.weights.subarray(rows.offsets[s]!, rows.offsets[s + 1]!), offsets[s]!);
      continue;
    }
    const size = columnStart[s + 1]! - columnStart[s]!;
    const kept = offsets[s + 1]! - offsets[s]!;
    if (kept === 0) continue;
    for (let k = 0; k < size; k++) order[k] = columnStart[s]! + k;
    selectLargest(order, size, kept, key);
    sortByKey(order, kept, key);
    for (let k = 0; k < kept; k++) {
      cols[offsets[s]! + k] = entries.seed[order[k]!]!;
      weights[offsets[s]! + k] = entries.weight[order[k]!]!;
    }
  }
  return { offsets, cols, weights };
}

/** Groups triplets by seed (counting sort) and keeps each seed's rowLength largest |w|, largest first. */
function rowsOf(entries: Entries, n: number, rowLength: number): SparseRows {
  const start = new Uint32Array(n + 1);
  for (let e = 0; e < entries.length; e++) start[entries.seed[e]! + 1]!++;
  for (let s = 0; s < n; s++) start[s + 1]! += start[s]!;
  const order = new Uint32Array(entries.length);
  const fill = start.slice(0, n);
  for (let e = 0; e < entries.length; e++) order[fill[entries.seed[e]!]!++] = e;
  const offsets = new Uint32Array(n + 1);
  for (let s = 0; s < n; s++) offsets[s + 1] = offsets[s]! + Math.min(rowLength, start[s + 1]! - start[s]!);
  const cols = new Uint32Array(offsets[n]!);
  const weights = new Float32Array(offsets[n]!);
  const key = (e: number) => Math.abs(entries.weight[e]!);
  for (let s = 0; s < n; s++) {
    const row = order.subarray(start[s]!, start[s + 1]!);
    const kept = offsets[s + 1]! - offsets[s]!;
    selectLargest(row, row.length, kept, key);
    sortByKey(row, kept, key);
    for (let k = 0; k < kept; k++) {
      cols[offsets[s]! + k] = entries.col[row[k]!]!;
      weights[offsets[s]! + k] = entries.weight[row[k]!]!;
    }
  }
  return { offsets, cols, weights };
}
