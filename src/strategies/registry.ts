/**
 * @module strategies/registry
 * Every strategy a list may name. The configuration's enum and each list's options are checked
 * against it (config/schema.ts, config/load.ts) and the ranking engine runs it (serving/engine.ts):
 * a new strategy is one file beside this one and one line below.
 */
import { wholeCatalog } from './catalog.ts';
import { itemToItem } from './item-to-item.ts';
import { latest } from './latest.ts';
import { newForYou } from './new-for-you.ts';
import { personalized } from './personalized.ts';
import { popular } from './popular.ts';
import type { Strategy } from './strategy.ts';
import { trending } from './trending.ts';

export const STRATEGIES = [personalized, itemToItem, trending, popular, latest, newForYou] as const;

export type StrategyName = (typeof STRATEGIES)[number]['name'];
export const STRATEGY_NAMES: readonly StrategyName[] = STRATEGIES.map((s) => s.name);

const byName = new Map<string, Strategy>(STRATEGIES.map((s) => [s.name, s]));
/** Chains by strategy, then by the list's fallback ('' for none): no key is built per request. */
const chains = new Map<string, Map<string, readonly Strategy[]>>();

export function strategyNamed(name: string): Strategy | undefined {
  return byName.get(name);
}

/** The JSON Schema of a list's `options` for the strategy. */
export function optionsSchemaOf(strategy: Strategy): object {
  return { type: 'object', additionalProperties: false, properties: strategy.optionsSchema };
}

/**
 * The strategies a list ranks through, in order: its own, its fallback (the list's, else the
 * strategy's), that one's fallback and so on until one repeats or has none; then `popular` and
 * `latest` if not in yet (any catalog with events or items fills them), and the whole catalog
 * last. Kept per (strategy, fallback): lists ask for it per request.
 */
export function strategyChain(strategy: StrategyName, fallback?: StrategyName): readonly Strategy[] {
  let byFallback = chains.get(strategy);
  if (!byFallback) chains.set(strategy, (byFallback = new Map()));
  let chain = byFallback.get(fallback ?? '');
  if (chain) return chain;
  const out: Strategy[] = [];
  let next: Strategy | undefined = byName.get(strategy);
  let override: string | undefined = fallback;
  while (next && !out.includes(next)) {
    out.push(next);
    next = byName.get(override ?? next.fallback ?? '');
    override = undefined;
  }
  for (const last of [popular, latest]) if (!out.includes(last)) out.push(last);
  out.push(wholeCatalog);
  byFallback.set(fallback ?? '', (chain = out));
  return chain;
}
