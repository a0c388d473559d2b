/**
 * @module strategies/item-to-item
 * `item_to_item` (lists such as "more like this"): the context item's co-occurrence neighbours
 * and the trained model's row for it, plus content similarity over the items sharing its
 * categories or tags, so a new item without events still gets neighbours.
 */
import { defineStrategy, everyIx, TRAINED_CANDIDATES, weightOption } from './strategy.ts';

/** Items sharing categories or tags with the context item, scored by content similarity. */
const SIMILAR_POOL = 200;
const similar: number[] = [];

export const itemToItem = defineStrategy({
  name: 'item_to_item',
  fallback: 'popular',
  optionsSchema: {
    popularityWeight: weightOption(0.05),
    contentWeight: weightOption(0.5),
  },
  candidates(env, request, input, options) {
    const ix = request.contextIx;
    if (ix === undefined || ix >= env.view.capacity) return false;
    input.addSeed(1, 0);
    input.addNeighbours(env.rows, ix, Infinity);
    const trained = env.trained.forItem(ix, request.exclude, TRAINED_CANDIDATES);
    if (trained) {
      input.addSeed(env.view.config.model.trained.weight, 0);
      input.addRow(trained, trained.ix.length);
    }
    env.ranker.addVector(ix, 1, input.startContext());
    env.view.similarCandidates(ix, SIMILAR_POOL, similar);
    // No category or tag to go by: content similarity over the whole catalog (rare: an O(n) pass).
    if (similar.length > 0) input.setPool(similar);
    else input.pool = everyIx(env);
    input.popularityWeight = options.popularityWeight!;
    input.contentWeight = options.contentWeight!;
    return true;
  },
});
