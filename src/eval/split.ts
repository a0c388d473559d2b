/**
 * @module eval/split
 * The train/test splits of the offline evaluation; the first and last row for row as the
 * recommenders library (recommenders-team/recommenders, recommenders/datasets/python_splitters.py)
 * makes them:
 *
 * - `stratifiedByItem` = python_stratified_split(ratio, filter_by="item", seed): one uniform draw
 *   per row in input order (numpy's MT19937, eval/mt19937.ts), rows ordered by (item, draw), and
 *   the row of rank r among its item's c rows trains when r <= round(ratio · c), rounded half to
 *   even as Python rounds (so an item of one or two ratings trains whole at 0.75).
 * - `lastByUser`: leave-last-out per user (the retail protocol; not in that library).
 * - `chronologicalByUser` = python_chrono_split(ratio, filter_by="user"): rows ordered by (user,
 *   time), ties kept in input order; the first `ratio` of each user's rows train, the rest test.
 *
 * Pure: no I/O.
 */
import { Mt19937 } from './mt19937.ts';

/** One interaction: a rating, a purchase, a view. */
export interface Interaction {
  user: string;
  item: string;
  /** Unix seconds. */
  t: number;
  /** The rating or other strength, when the data has one. */
  weight?: number;
}

export interface Split {
  train: Interaction[];
  test: Interaction[];
}

/** Python's round(): to the nearest integer, halves to the even one. */
export function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  const rest = x - floor;
  if (rest !== 0.5) return Math.round(x);
  return floor % 2 === 0 ? floor : floor + 1;
}

/** Splits by the rank of each row within its group (rank from 1, order given by `before`). */
function splitByRank(rows: readonly Interaction[], group: (r: Interaction) => string, before: (a: number, b: number) => number, ratio: number): Split {
  const order = Array.from(rows, (_, i) => i).sort((a, b) => {
    const ga = group(rows[a]!);
    const gb = group(rows[b]!);
    return ga < gb ? -1 : ga > gb ? 1 : before(a, b);
  });
  const train: Interaction[] = [];
  const test: Interaction[] = [];
  for (let start = 0; start < order.length; ) {
    const key = group(rows[order[start]!]!);
    let end = start;
    while (end < order.length && group(rows[order[end]!]!) === key) end++;
    const count = end - start;
    // pandas: rank <= round(ratio * count), Python's round (half to even): an item of one or two
    // ratings trains whole at 0.75.
    const cutoff = roundHalfEven(ratio * count);
    for (let i = start; i < end; i++) (i - start + 1 <= cutoff ? train : test).push(rows[order[i]!]!);
    start = end;
  }
  return { train, test };
}

/** For each item, a random `ratio` of its rows trains (python_stratified_split, filter_by="item"). */
export function stratifiedByItem(rows: readonly Interaction[], ratio: number, seed: number): Split {
  const rng = new Mt19937(seed);
  const draw = Float64Array.from(rows, () => rng.random());
  return splitByRank(rows, (r) => r.item, (a, b) => draw[a]! - draw[b]! || a - b, ratio);
}

/** For each user, the oldest `ratio` of their rows trains (python_chrono_split, filter_by="user"). */
export function chronologicalByUser(rows: readonly Interaction[], ratio: number): Split {
  return splitByRank(rows, (r) => r.user, (a, b) => rows[a]!.t - rows[b]!.t || a - b, ratio);
}

/**
 * Each user's last interaction tests, the rest train (users with one interaction train only):
 * the retail protocol, where a user buys a few items and the next purchase is what to predict.
 */
export function lastByUser(rows: readonly Interaction[]): Split {
  const count = new Map<string, number>();
  for (const r of rows) count.set(r.user, (count.get(r.user) ?? 0) + 1);
  const order = Array.from(rows, (_, i) => i).sort((a, b) => {
    const ua = rows[a]!.user;
    const ub = rows[b]!.user;
    return ua < ub ? -1 : ua > ub ? 1 : rows[a]!.t - rows[b]!.t || a - b;
  });
  const train: Interaction[] = [];
  const test: Interaction[] = [];
  for (let i = 0; i < order.length; i++) {
    const r = rows[order[i]!]!;
    const last = i + 1 === order.length || rows[order[i + 1]!]!.user !== r.user;
    (last && count.get(r.user)! > 1 ? test : train).push(r);
  }
  return { train, test };
}
