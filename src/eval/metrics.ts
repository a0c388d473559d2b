/**
 * @module eval/metrics
 * Top-k ranking metrics exactly as the recommenders library computed them for its MovieLens
 * benchmark (recommenders/evaluation/python_evaluation.py, the 2022 release):
 *
 * - users: those with both test items and a prediction ("common users"); every metric is a sum
 *   over them divided by their count, so a user without a hit counts 0.
 * - precision@k = hits / k (also when fewer than k items were predicted);
 * - recall@k = hits / |relevant|;
 * - nDCG@k with binary gains: Σ over hits of 1/ln(1 + rank), over the ideal Σ_{i ≤ min(|relevant|, k)} 1/ln(1 + i);
 * - MAP (their `map`): Σ over hits of (hits so far / rank), over |relevant| (all of them, not min(|relevant|, k)).
 *
 * Every test item of a user is relevant whatever its rating. Pure.
 */

export interface RankingMetrics {
  precisionAtK: number;
  recallAtK: number;
  ndcgAtK: number;
  map: number;
  /** Users averaged over. */
  users: number;
}

/**
 * Metrics of `predictions` (user → items, best first; only the first k count) against `relevant`
 * (user → test items).
 */
export function rankingMetrics(relevant: ReadonlyMap<string, ReadonlySet<string>>, predictions: ReadonlyMap<string, readonly string[]>, k: number): RankingMetrics {
  let users = 0;
  let precision = 0;
  let recall = 0;
  let ndcg = 0;
  let map = 0;
  for (const [user, items] of relevant) {
    const predicted = predictions.get(user);
    if (!predicted || items.size === 0) continue;
    users++;
    let hits = 0;
    let dcg = 0;
    let precisionSum = 0;
    const n = Math.min(k, predicted.length);
    for (let r = 1; r <= n; r++) {
      if (!items.has(predicted[r - 1]!)) continue;
      hits++;
      dcg += 1 / Math.log(1 + r);
      precisionSum += hits / r;
    }
    let idcg = 0;
    for (let i = 1; i <= Math.min(items.size, k); i++) idcg += 1 / Math.log(1 + i);
    precision += hits / k;
    recall += hits / items.size;
    ndcg += dcg / idcg;
    map += precisionSum / items.size;
  }
  const over = (x: number) => (users > 0 ? x / users : 0);
  return { precisionAtK: over(precision), recallAtK: over(recall), ndcgAtK: over(ndcg), map: over(map), users };
}
