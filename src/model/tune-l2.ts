/**
 * @module model/tune-l2
 * Chooses the trained model's L2 penalty λ per build from the data it is built on: the best λ
 * differs between datasets by more than the model's other choices (tuned on the test answers,
 * full EASE wants 400 on MovieLens 100k and 50 on the retail sample), so a fixed default is
 * wrong somewhere. Each sampled user's last consumed item (in log order: a live service
 * predicts what comes next) is held out, the dense head is solved for each candidate λ on the
 * rest, and the λ whose model ranks the held-out items best (nDCG@10) wins; ties keep the
 * configured one. Costs one Gram matrix and one head-sized inversion per candidate. Pure
 * computation: no I/O (the trainer worker runs it).
 */
import { gramMatrix, invertSpdInPlace, type AutoencoderOptions, type InteractionRows } from './linear-autoencoder.ts';
import { headRows } from './sparse-autoencoder.ts';

/** Users whose held-out item scores a candidate: enough to separate λ by more than noise, few enough to stay cheap. */
const MAX_VALIDATION_USERS = 2_000;
/** A validation user keeps at least this many head items to be scored from. */
const MIN_KEPT_ITEMS = 2;
const K = 10;

export interface L2Choice {
  l2: number;
  /** Mean nDCG@10 of the held-out items per candidate, in candidate order. */
  ndcg: number[];
  validationUsers: number;
}

/**
 * The best of `candidates` (the configured λ among them: it wins ties) for a model whose first
 * `head` columns are solved densely; `latest[u]` is user u's held-out entry (index into rows.cols).
 */
export function chooseL2(
  rows: InteractionRows,
  latest: Uint32Array,
  head: number,
  options: AutoencoderOptions,
  candidates: readonly number[],
): L2Choice {
  const users = rows.offsets.length - 1;
  const eligible: number[] = [];
  for (let u = 0; u < users; u++) {
    const held = latest[u]!;
    if (rows.cols[held]! >= head) continue;
    let kept = 0;
    for (let e = rows.offsets[u]!; e < rows.offsets[u + 1]!; e++) if (e !== held && rows.cols[e]! < head) kept++;
    if (kept >= MIN_KEPT_ITEMS) eligible.push(u);
  }
  if (eligible.length === 0) return { l2: options.l2, ndcg: [], validationUsers: 0 };
  // An even spread over users (rows are in first-seen order), the same at every build of the same data.
  const step = Math.max(1, eligible.length / MAX_VALIDATION_USERS);
  const validation: number[] = [];
  for (let p = 0; p < eligible.length; p += step) validation.push(eligible[Math.floor(p)]!);
  const heldOut = new Uint8Array(rows.cols.length);
  for (const u of validation) heldOut[latest[u]!] = 1;

  const gram = gramMatrix(headRows(rows, head, heldOut), head);
  const dropoutScale = options.method === 'dlae' ? options.dropout / (1 - options.dropout) : 0;
  const lambda = new Float64Array(head);
  const p = new Float64Array(head * head);
  const scores = new Float64Array(head);
  const ndcg: number[] = [];
  for (const l2 of candidates) {
    p.set(gram);
    for (let j = 0; j < head; j++) {
      lambda[j] = dropoutScale * gram[j * head + j]! + l2;
      p[j * head + j]! += lambda[j]!;
    }
    invertSpdInPlace(p, head);
    let gain = 0;
    for (const u of validation) {
      // Scores of items the user did not keep, up to a positive factor and the same for all:
      // DLAE B = I − P·Λ gives −λ_j·(x·P)_j; EASE B = I − P·diag(1/diag P) gives −(x·P)_j / P_jj.
      scores.fill(0);
      const held = latest[u]!;
      for (let e = rows.offsets[u]!; e < rows.offsets[u + 1]!; e++) {
        const i = rows.cols[e]!;
        if (e === held || i >= head) continue;
        const x = rows.values[e]!;
        const row = i * head;
        for (let j = 0; j < head; j++) scores[j]! += x * p[row + j]!;
      }
      for (let j = 0; j < head; j++) scores[j] = options.method === 'dlae' ? -lambda[j]! * scores[j]! : -scores[j]! / p[j * head + j]!;
      for (let e = rows.offsets[u]!; e < rows.offsets[u + 1]!; e++) if (e !== held && rows.cols[e]! < head) scores[rows.cols[e]!] = -Infinity;
      const target = scores[rows.cols[held]!]!;
      let rank = 0;
      for (let j = 0; j < head && rank < K; j++) if (scores[j]! > target) rank++;
      if (rank < K) gain += 1 / Math.log2(rank + 2);
    }
    ndcg.push(gain / validation.length);
  }
  let best = candidates.indexOf(options.l2);
  if (best < 0) best = 0;
  for (let c = 0; c < candidates.length; c++) if (ndcg[c]! > ndcg[best]!) best = c;
  return { l2: candidates[best]!, ndcg, validationUsers: validation.length };
}
