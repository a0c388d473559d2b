/**
 * @module strategies/catalog
 * The last resort of every list's chain (not a strategy a list names): the whole catalog,
 * popular first, then recent, so a list is full whenever the catalog and its filters allow.
 */
import { defineStrategy, everyIx, weightOption } from './strategy.ts';

export const wholeCatalog = defineStrategy({
  name: 'catalog',
  optionsSchema: {
    popularityWeight: weightOption(1),
    recencyWeight: weightOption(0.5),
  },
  candidates(env, _request, input, options) {
    input.pool = everyIx(env);
    input.popularityWeight = options.popularityWeight!;
    input.recencyWeight = options.recencyWeight!;
    return true;
  },
});
