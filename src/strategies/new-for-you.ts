/**
 * @module strategies/new-for-you
 * `new_for_you`: items published in the last `maxAgeDays`, in the categories the user consumes.
 * Each of the user's `maxSeeds` most recent items counts its weight (the event type's) for each
 * of its categories (every level of a category path); a new item scores its categories' share
 * of that weight, so an item in the user's most consumed category path comes first, and recency,
 * then a little popularity, order items of equal affinity. Read from the `latest` list
 * (catalog-view.ts: the 5,000 items published last), newest first, head first.
 */
import { withRoom } from '../domain/grown.ts';
import { defineStrategy, weightOption } from './strategy.ts';

const DAY = 86_400;

let recentSeeds = new Uint32Array(64);
/** Seed weight per category key id; the ids touched, to zero them after. */
let affinity = new Float32Array(256);
const touched: number[] = [];
const keys: number[] = [];

export const newForYou = defineStrategy({
  name: 'new_for_you',
  fallback: 'latest',
  deepens: true,
  optionsSchema: {
    maxAgeDays: { type: 'number', minimum: 0, maximum: 36_500, default: 30 },
    maxSeeds: { type: 'integer', minimum: 1, maximum: 1000, default: 50 },
    recencyWeight: weightOption(0.5),
    recencyHalfLifeDays: { type: 'number', minimum: 0.01, maximum: 36_500, default: 7 },
    popularityWeight: weightOption(0.05),
  },
  candidates(env, request, input, options, depth) {
    const seeds = request.seeds;
    if (seeds.count === 0) return false;
    const view = env.view;
    recentSeeds = withRoom(recentSeeds, options.maxSeeds!);
    const n = seeds.mostRecent(options.maxSeeds!, recentSeeds);
    affinity = withRoom(affinity, view.keyCount);
    let total = 0;
    for (let r = 0; r < n; r++) {
      const s = recentSeeds[r]!;
      const weight = seeds.weight[s]!;
      view.categoriesOf(seeds.ix[s]!, keys);
      if (keys.length === 0) continue;
      total += weight;
      for (const key of keys) {
        if (affinity[key] === 0) touched.push(key);
        affinity[key]! += weight;
      }
    }
    let found = false;
    if (total > 0) {
      const oldest = request.nowSec - options.maxAgeDays! * DAY;
      input.addSeed(1, 0);
      const latest = view.latest;
      for (let i = 0; i < latest.length && input.t < depth; i++) {
        const ix = latest[i]!;
        if (view.published[ix]! < oldest) break; // newest first: the rest are older still
        let score = 0;
        for (const key of view.categoriesOf(ix, keys)) score += affinity[key]!;
        if (score > 0) input.addEntry(ix, score / total);
      }
      found = input.t > 0;
    }
    for (const key of touched) affinity[key] = 0;
    touched.length = 0;
    input.recencyWeight = options.recencyWeight!;
    input.recencyHalfLifeSec = options.recencyHalfLifeDays! * DAY;
    input.popularityWeight = options.popularityWeight!;
    return found;
  },
});
