/**
 * @module strategies/personalized
 * `personalized`: the user's recent items (stored history, events just accepted, request
 * histories, the context item) as seeds, each bringing its co-occurrence neighbours with time
 * decay; the trained model's candidates for the whole history as one more seed row; a little
 * popularity and the content similarity of the seeds' vectors.
 */
import { withRoom } from '../domain/grown.ts';
import type { TopList } from './candidate-input.ts';
import { defineStrategy, TRAINED_CANDIDATES, weightOption, type StrategyEnvironment, type StrategyRequest } from './strategy.ts';

/** Seeds the list grows from: the most recent distinct items. */
const MAX_SEEDS = 10;
/** Neighbours read per seed row (rows are stored strongest first). */
const ROW = 30;
/** Seeds' ages count in whole hours (below an hour, no decay): an hour of a 14-day half-life is 0.2%. */
const SEED_AGE_STEP_SEC = 3600;

const recentSeeds = new Uint32Array(MAX_SEEDS);
let trainedSeeds = new Uint32Array(0);
let trainedIx = new Uint32Array(256);
let trainedWeight = new Float32Array(256);

export const personalized = defineStrategy({
  name: 'personalized',
  fallback: 'popular',
  optionsSchema: {
    popularityWeight: weightOption(0.05),
    contentWeight: weightOption(0.3),
  },
  candidates(env, request, input, options) {
    const seeds = request.seeds;
    if (seeds.count === 0) return false;
    const n = seeds.mostRecent(MAX_SEEDS, recentSeeds);
    const context = input.startContext();
    // Ages count from the user's newest seed (model.seedHalfLifeSec): the kernel decays by
    // now − time, so a seed goes in as now − its age (from the request instead when a seed
    // is "now", time 0, such as the context item). On MovieLens's time split (lists asked at the data's
    // end), decay from the request left nothing of this part to users last seen months
    // before: nDCG@10 0.2049 with it, 0.2127 from the newest seed (issue 13).
    const newest = n > 0 ? seeds.time[recentSeeds[0]!]! : 0;
    const nowSec = request.nowSec;
    const ageFrom = newest > 0 && nowSec > newest ? newest : nowSec;
    for (let r = 0; r < n; r++) {
      const ix = seeds.ix[recentSeeds[r]!]!;
      const weight = seeds.weight[recentSeeds[r]!]!;
      const time = seeds.time[recentSeeds[r]!]!;
      // Ages in whole SEED_AGE_STEP_SEC: a burst of events is stamped over a second or two,
      // differently each time it arrives, and a second more of age (5.7e-7 less weight at
      // 14 days) could swap near-equal candidates (issue 13: results may not depend on when
      // the same events arrived).
      const age = Math.max(0, ageFrom - time);
      input.addSeed(weight, time === 0 ? 0 : nowSec - (age - (age % SEED_AGE_STEP_SEC)));
      input.addNeighbours(env.rows, ix, ROW);
      env.ranker.addVector(ix, weight, context);
    }
    input.normaliseContext();
    const trained = trainedForUser(env, request);
    if (trained) {
      input.addSeed(env.view.config.model.trained.weight, 0);
      input.addRow(trained, trained.ix.length);
    }
    input.popularityWeight = options.popularityWeight!;
    input.contentWeight = options.contentWeight!;
    return true;
  },
});

/**
 * The trained model's candidates for the user's history (its model.trained.maxSeeds most recent
 * items, more than the co-occurrence's MAX_SEEDS: the model weighs a history as a whole). Seeds decay with the
 * model's own half-life (model.trained.halfLifeSec, the one it was trained with; 0 = none),
 * not the co-occurrence seeds' one: the model stands for lasting taste, the co-occurrence
 * neighbours for what the user is doing now. Once per request (kept on it).
 */
function trainedForUser(env: StrategyEnvironment, request: StrategyRequest): TopList | undefined {
  if (request.trained !== undefined) return request.trained ?? undefined;
  const { halfLifeSec: halfLife, maxSeeds } = env.view.config.model.trained;
  const seeds = request.seeds;
  const n = maxSeeds > 0 && seeds.count > maxSeeds ? seeds.mostRecent(maxSeeds, (trainedSeeds = withRoom(trainedSeeds, maxSeeds))) : seeds.count;
  const order = n < seeds.count ? trainedSeeds : undefined;
  const ixs = (trainedIx = withRoom(trainedIx, n));
  const weights = (trainedWeight = withRoom(trainedWeight, n));
  for (let r = 0; r < n; r++) {
    const s = order ? order[r]! : r;
    const time = seeds.time[s]!;
    const age = time === 0 ? 0 : Math.max(0, request.nowSec - time);
    ixs[r] = seeds.ix[s]!;
    weights[r] = halfLife > 0 ? seeds.weight[s]! * 2 ** (-age / halfLife) : seeds.weight[s]!;
  }
  const top = env.trained.forSeeds(ixs, weights, n, request.exclude, TRAINED_CANDIDATES);
  request.trained = top ?? null;
  return top;
}
