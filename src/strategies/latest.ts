/**
 * @module strategies/latest
 * `latest`: the items published last (`publication_datetime`), newest first.
 */
import { defineStrategy } from './strategy.ts';

export const latest = defineStrategy({
  name: 'latest',
  fallback: 'popular',
  deepens: true,
  optionsSchema: {},
  candidates: (env, _request, input, _options, depth) => input.addRankedList(env.view.latestList(), depth),
});
