/**
 * @module strategies/popular
 * `popular`: all-time popularity (event weights summed per item), as the serving signals keep it.
 */
import { defineStrategy } from './strategy.ts';

export const popular = defineStrategy({
  name: 'popular',
  fallback: 'latest',
  deepens: true,
  optionsSchema: {},
  candidates: (env, _request, input, _options, depth) => input.addRankedList(env.signals.popular, depth),
});
