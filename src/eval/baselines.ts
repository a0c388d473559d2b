/**
 * @module eval/baselines
 * The rivals the eval prints beside Affinity, computed on the same split in the same run, each
 * from the training interactions as a binary user × item matrix (a rating or a repeat counts
 * once) and each excluding the user's training items, as Affinity does:
 *
 * - `popular`: items by their number of training users.
 * - `item-kNN`: cosine similarity of item columns, each item's 100 most similar kept; a user's
 *   score for j is Σ over their items i of sim(i, j).
 * - `EASE`: full dense EASE (Steck 2019), λ tuned over a grid on this split's test items (an
 *   optimistic rival: it sees the answers to pick λ), where it fits (MAX_EASE_ITEMS).
 *
 * Offline tooling, pure computation.
 */
import { trainAutoencoder } from '../training/linear-autoencoder.ts';
import { type RankingMetrics, rankingMetrics } from './metrics.ts';
import type { Interaction } from './split.ts';

export type Predictions = Map<string, string[]>;

const KNN_NEIGHBOURS = 100;
/** Dense EASE needs 12·n² bytes and n³/2 multiply-adds: 4,000 items is 190 MB and a minute. */
const MAX_EASE_ITEMS = 4000;
const EASE_LAMBDAS = [50, 100, 200, 400, 800, 1600];

interface Matrix {
  items: string[];
  /** User → their distinct item indices. */
  users: Map<string, number[]>;
}

function matrixOf(train: readonly Interaction[]): Matrix {
  const index = new Map<string, number>();
  const items: string[] = [];
  const users = new Map<string, number[]>();
  for (const r of train) {
    let ix = index.get(r.item);
    if (ix === undefined) {
      index.set(r.item, (ix = items.length));
      items.push(r.item);
    }
    const mine = users.get(r.user);
    if (!mine) users.set(r.user, [ix]);
    else if (!mine.includes(ix)) mine.push(ix);
  }
  return { items, users };
}

/** Top k of `scores` for each user in `forUsers`, without their training items. */
function topK(m: Matrix, forUsers: Iterable<string>, k: number, score: (history: number[], out: Float64Array) => void): Predictions {
  const out: Predictions = new Map();
  const scores = new Float64Array(m.items.length);
  const order = Array.from(m.items, (_, i) => i);
  for (const user of forUsers) {
    const history = m.users.get(user);
    if (!history) continue;
    scores.fill(0);
    score(history, scores);
    for (const ix of history) scores[ix] = -Infinity;
    order.sort((a, b) => scores[b]! - scores[a]! || a - b);
    out.set(user, order.slice(0, k).map((ix) => m.items[ix]!));
  }
  return out;
}

export function popularBaseline(train: readonly Interaction[], forUsers: Iterable<string>, k: number): Predictions {
  const m = matrixOf(train);
  const count = new Float64Array(m.items.length);
  for (const history of m.users.values()) for (const ix of history) count[ix]!++;
  return topK(m, forUsers, k, (_, out) => out.set(count));
}

export function itemKnnBaseline(train: readonly Interaction[], forUsers: Iterable<string>, k: number): Predictions {
  const m = matrixOf(train);
  const n = m.items.length;
  const count = new Float64Array(n);
  const co = new Map<number, Map<number, number>>();
  for (const history of m.users.values()) {
    for (const a of history) {
      count[a]!++;
      let row = co.get(a);
      if (!row) co.set(a, (row = new Map()));
      for (const b of history) if (b !== a) row.set(b, (row.get(b) ?? 0) + 1);
    }
  }
  const neighbours = new Map<number, Array<[number, number]>>();
  for (const [a, row] of co) {
    const sims = [...row].map(([b, c]) => [b, c / Math.sqrt(count[a]! * count[b]!)] as [number, number]);
    neighbours.set(a, sims.sort((x, y) => y[1] - x[1]).slice(0, KNN_NEIGHBOURS));
  }
  return topK(m, forUsers, k, (history, out) => {
    for (const i of history) for (const [j, s] of neighbours.get(i) ?? []) out[j]! += s;
  });
}

/** Full EASE at the λ of the grid with the best nDCG on `relevant`; undefined when the catalog is too large. */
export function easeBaseline(
  train: readonly Interaction[],
  relevant: ReadonlyMap<string, ReadonlySet<string>>,
  k: number,
): { predictions: Predictions; lambda: number; metrics: RankingMetrics } | undefined {
  const m = matrixOf(train);
  const n = m.items.length;
  if (n > MAX_EASE_ITEMS) return undefined;
  const offsets = [0];
  const cols: number[] = [];
  for (const history of m.users.values()) {
    cols.push(...history);
    offsets.push(cols.length);
  }
  const rows = { offsets: Uint32Array.from(offsets), cols: Uint32Array.from(cols), values: new Float32Array(cols.length).fill(1) };
  let best: { predictions: Predictions; lambda: number; metrics: RankingMetrics } | undefined;
  for (const lambda of EASE_LAMBDAS) {
    const b = trainAutoencoder(rows, n, { method: 'ease', l2: lambda, dropout: 0 });
    const predictions = topK(m, relevant.keys(), k, (history, out) => {
      for (const i of history) for (let j = 0; j < n; j++) out[j]! += b[i * n + j]!;
    });
    const metrics = rankingMetrics(relevant, predictions, k);
    if (!best || metrics.ndcgAtK > best.metrics.ndcgAtK) best = { predictions, lambda, metrics };
  }
  return best;
}

/** History-length buckets of the per-bucket table (training interactions of the user). */
export const HISTORY_BUCKETS = [
  { label: '1–4', min: 1, max: 4 },
  { label: '5–9', min: 5, max: 9 },
  { label: '10–19', min: 10, max: 19 },
  { label: '20+', min: 20, max: Infinity },
] as const;

/** Metrics per history-length bucket (users by their number of distinct training items). */
export function metricsByBucket(train: readonly Interaction[], relevant: ReadonlyMap<string, ReadonlySet<string>>, predictions: ReadonlyMap<string, readonly string[]>, k: number): RankingMetrics[] {
  const length = new Map<string, Set<string>>();
  for (const r of train) {
    const items = length.get(r.user);
    if (items) items.add(r.item);
    else length.set(r.user, new Set([r.item]));
  }
  return HISTORY_BUCKETS.map(({ min, max }) => {
    const subset = new Map<string, ReadonlySet<string>>();
    for (const [user, items] of relevant) {
      const size = length.get(user)?.size ?? 0;
      if (size >= min && size <= max) subset.set(user, items);
    }
    return rankingMetrics(subset, predictions, k);
  });
}
