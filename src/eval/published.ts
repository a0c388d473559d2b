/**
 * @module eval/published
 * The published figures the eval prints beside its own: the recommenders benchmark notebook
 * (recommenders-team/recommenders, examples/06_benchmarks/movielens.ipynb), its run of
 * 2022-10-19 on MovieLens 100k: python_stratified_split(ratio=0.75, filter_by="item", seed=42),
 * top 10, every test rating relevant. Data only.
 */

export interface PublishedRow {
  algorithm: string;
  precisionAt10: number;
  recallAt10: number;
  ndcgAt10: number;
  map: number;
}

export const PUBLISHED_SOURCE = 'recommenders-team/recommenders examples/06_benchmarks/movielens.ipynb, run of 2022-10-19, ML-100k';

export const PUBLISHED_ML_100K: readonly PublishedRow[] = [
  { algorithm: 'SAR', precisionAt10: 0.333828, recallAt10: 0.183179, ndcgAt10: 0.388321, map: 0.113028 },
  { algorithm: 'BPR', precisionAt10: 0.388229, recallAt10: 0.212522, ndcgAt10: 0.441997, map: 0.132478 },
  { algorithm: 'LightGCN', precisionAt10: 0.360976, recallAt10: 0.196052, ndcgAt10: 0.417629, map: 0.121633 },
  { algorithm: 'BiVAE', precisionAt10: 0.411771, recallAt10: 0.219145, ndcgAt10: 0.475077, map: 0.146126 },
];
