/**
 * @module strategies/trending
 * `trending`: hourly popularity of the last 24 hours, halving every 6 hours, as the serving signals keep it.
 */
import { defineStrategy } from './strategy.ts';

export const trending = defineStrategy({
  name: 'trending',
  fallback: 'popular',
  deepens: true,
  optionsSchema: {},
  candidates: (env, _request, input, _options, depth) => input.addRankedList(env.signals.trending, depth),
});
