/**
 * @module training/linear-autoencoder
 * The trained model's numeric core: an item-item weight matrix B learned in closed form from the
 * user × item matrix X, so that a user's scores are x_u · B (Steck's linear autoencoders):
 *
 * - `ease` (EASE, Steck 2019): P = (XᵀX + λI)⁻¹, B = I − P·diag(1/diag(P)), diagonal forced to 0.
 * - `dlae` (denoising linear autoencoder, Steck 2020 "Autoencoders that don't overfit towards the
 *   identity"): Λ = p/(1−p)·diag(XᵀX) + λI, P = (XᵀX + Λ)⁻¹, B = I − P·Λ. Dropout p regularises
 *   popular items more, which measured best on MovieLens (README, "Trained model").
 *
 * Both cost one n × n Gram matrix and one symmetric positive-definite inversion: O(n³) time and
 * 8·n² bytes, so callers bound n (model.trained.maxItems). Pure computation: no I/O, no threads;
 * the trainer worker runs it off the main thread. Throws a plain Error when the matrix is not
 * positive definite (cannot happen with λ > 0 and finite input, but is checked, not assumed).
 */

export type TrainingMethod = 'ease' | 'dlae';

export interface AutoencoderOptions {
  method: TrainingMethod;
  /** λ, the L2 penalty, > 0 (in units of X's squared values, mean value normalised to 1). */
  l2: number;
  /** DLAE dropout probability p in [0, 1); ignored by EASE. */
  dropout: number;
}

/**
 * Sparse training rows: for each user, the model columns they interacted with and the value of
 * each (a weight > 0). `cols[offsets[u] .. offsets[u + 1])`.
 */
export interface InteractionRows {
  offsets: Uint32Array;
  cols: Uint32Array;
  values: Float32Array;
}

/** Bytes of working memory a model over `n` columns needs (the f64 matrix plus the f32 output). */
export function autoencoderBytes(n: number): number {
  return n * n * (8 + 4) + n * 64;
}

/** XᵀX as a dense row-major f64 n × n matrix; Σ over users of (their column count)² steps. */
export function gramMatrix(rows: InteractionRows, n: number): Float64Array {
  const g = new Float64Array(n * n);
  const users = rows.offsets.length - 1;
  for (let u = 0; u < users; u++) {
    const start = rows.offsets[u]!;
    const end = rows.offsets[u + 1]!;
    for (let a = start; a < end; a++) {
      const ca = rows.cols[a]!;
      const va = rows.values[a]!;
      const base = ca * n;
      for (let b = start; b < end; b++) g[base + rows.cols[b]!]! += va * rows.values[b]!;
    }
  }
  return g;
}

/** Σ a[ai + k] · b[bi + k] for k < len, four accumulators so additions pipeline. */
function dot(a: Float64Array, ai: number, bi: number, len: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let k = 0;
  for (; k + 3 < len; k += 4) {
    s0 += a[ai + k]! * a[bi + k]!;
    s1 += a[ai + k + 1]! * a[bi + k + 1]!;
    s2 += a[ai + k + 2]! * a[bi + k + 2]!;
    s3 += a[ai + k + 3]! * a[bi + k + 3]!;
  }
  for (; k < len; k++) s0 += a[ai + k]! * a[bi + k]!;
  return s0 + s1 + (s2 + s3);
}

/**
 * Inverts a symmetric positive-definite matrix in place (row-major; only its lower triangle is
 * read). Cholesky A = LLᵀ, then M = L⁻¹ column by column, then A⁻¹ = MᵀM: about n³/2
 * multiply-adds, every inner loop a dot product of two contiguous rows, so the work runs from
 * cache rather than streaming the whole matrix once per pivot (Gauss-Jordan was 4× slower at
 * n = 1682 for that reason). Layout while working: L strictly below the diagonal, its diagonal
 * in `d`; Mᵀ on and above the diagonal; A⁻¹ written below the diagonal as L's rows retire.
 * Throws when a pivot is not > 0 (not positive definite).
 */
export function invertSpdInPlace(a: Float64Array, n: number): void {
  const d = new Float64Array(n);
  // 1. Cholesky, row by row: L[i][j] = (A[i][j] − L[i][0..j)·L[j][0..j)) / d[j].
  for (let i = 0; i < n; i++) {
    const iBase = i * n;
    for (let j = 0; j < i; j++) a[iBase + j] = (a[iBase + j]! - dot(a, iBase, j * n, j)) / d[j]!;
    const pivot = a[iBase + i]! - dot(a, iBase, iBase, i);
    if (!(pivot > 0) || !Number.isFinite(pivot)) throw new Error(`matrix is not positive definite (pivot ${pivot} at ${i})`);
    d[i] = Math.sqrt(pivot);
  }
  // 2. Column j of M = L⁻¹ solves L·m = e_j; kept as row j of Mᵀ (entries i >= j, upper part).
  const m = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    m.fill(0, j);
    for (let i = j; i < n; i++) {
      const iBase = i * n;
      let s = i === j ? 1 : 0;
      // Σ over k in [j, i) of L[i][k]·m[k]: L's row i and m are both contiguous.
      let s0 = 0;
      let s1 = 0;
      let k = j;
      for (; k + 1 < i; k += 2) {
        s0 += a[iBase + k]! * m[k]!;
        s1 += a[iBase + k + 1]! * m[k + 1]!;
      }
      if (k < i) s0 += a[iBase + k]! * m[k]!;
      s -= s0 + s1;
      m[i] = s / d[i]!;
    }
    // Row j of Mᵀ from column j on; the lower part of row j still holds L, needed by later j.
    a.set(m.subarray(j), j * n + j);
  }
  // 3. A⁻¹[b][c] = Σ_{k >= b} Mᵀ[b][k]·Mᵀ[c][k] for c <= b, written at [b][c] (below the diagonal,
  // where L is no longer needed), then mirrored. Rows b of Mᵀ are read from column b on only.
  for (let b = n - 1; b >= 0; b--) {
    const bBase = b * n;
    for (let c = 0; c <= b; c++) {
      a[bBase + c] = dot(a, bBase + b, c * n + b, n - b);
    }
  }
  for (let b = 0; b < n; b++) for (let c = b + 1; c < n; c++) a[b * n + c] = a[c * n + b]!;
}

/**
 * The learned n × n item weights B (row-major f32: row i holds what item i adds to each item's
 * score). The diagonal is 0 for EASE; for DLAE it is left as computed (a consumed item is
 * never recommended, so it does not matter).
 */
export function trainAutoencoder(rows: InteractionRows, n: number, options: AutoencoderOptions): Float32Array {
  if (!(options.l2 > 0)) throw new Error(`l2 must be > 0, got ${options.l2}`);
  if (!(options.dropout >= 0 && options.dropout < 1)) throw new Error(`dropout must be in [0, 1), got ${options.dropout}`);
  const a = gramMatrix(rows, n);
  const lambda = new Float64Array(n);
  const dropoutScale = options.method === 'dlae' ? options.dropout / (1 - options.dropout) : 0;
  for (let j = 0; j < n; j++) {
    lambda[j] = dropoutScale * a[j * n + j]! + options.l2;
    a[j * n + j]! += lambda[j]!;
  }
  invertSpdInPlace(a, n);
  const b = new Float32Array(n * n);
  if (options.method === 'ease') {
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) b[i * n + j] = i === j ? 0 : -a[i * n + j]! / a[j * n + j]!;
    }
  } else {
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) b[i * n + j] = (i === j ? 1 : 0) - a[i * n + j]! * lambda[j]!;
    }
  }
  return b;
}
