// The strategy registry as the configuration and the engine read it: the enum the configuration
// accepts is the registry's names, each list's options are checked against its strategy's
// schema and filled with its defaults, and a list ranks through its strategy's fallbacks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../../src/config/load.ts';
import { configFile, configProblems } from '../../helpers/config.ts';
import { STRATEGIES, STRATEGY_NAMES, strategyChain } from '../../../src/strategies/registry.ts';

const fileOf = (lists: Record<string, unknown>) => configFile('config.json', JSON.stringify({ environments: { shop: { itemTypes: ['product'], lists } } }));
const load = (lists: Record<string, unknown>) => loadConfig({ AFFINITY_CONFIG: fileOf(lists) });
const problemsOf = (lists: Record<string, unknown>) => configProblems({ AFFINITY_CONFIG: fileOf(lists) });

const names = (chain: ReadonlyArray<{ name: string }>) => chain.map((s) => s.name);

test('the configuration accepts every registered strategy and no other name', () => {
  assert.deepEqual(STRATEGY_NAMES, ['personalized', 'item_to_item', 'trending', 'popular', 'latest', 'new_for_you']);
  const config = load(Object.fromEntries(STRATEGY_NAMES.map((name) => [name, { strategy: name, itemTypes: [] }])));
  assert.deepEqual(Object.values(config.environments.shop!.lists).map((l) => l.strategy), STRATEGY_NAMES);
  const problems = problemsOf({ l: { strategy: 'for_you_maybe', itemTypes: [] }, m: { strategy: 'popular', itemTypes: [], fallback: 'catalog' } });
  assert.ok(problems.some((p) => p.startsWith('environments.shop.lists.l.strategy must be equal to one of the allowed values')), problems.join('\n'));
  assert.ok(problems.some((p) => p.startsWith('environments.shop.lists.m.fallback must be equal to one of the allowed values')), problems.join('\n'));
});

test("a list's options are its strategy's, checked against its schema and completed with its defaults", () => {
  const config = load({
    mine: { strategy: 'new_for_you', itemTypes: [], options: { maxAgeDays: 7 } },
    plain: { strategy: 'personalized', itemTypes: [] },
    top: { strategy: 'popular', itemTypes: [] },
  });
  const lists = config.environments.shop!.lists;
  assert.deepEqual(lists.mine!.options, { maxAgeDays: 7, maxSeeds: 50, recencyWeight: 0.5, recencyHalfLifeDays: 7, popularityWeight: 0.05 });
  assert.deepEqual(lists.plain!.options, { popularityWeight: 0.05, contentWeight: 0.3 });
  assert.deepEqual(lists.top!.options, {});
  assert.ok(Object.isFrozen(lists.mine!.options), 'options are frozen with the rest of the configuration');

  const problems = problemsOf({
    a: { strategy: 'new_for_you', itemTypes: [], options: { maxAgeDays: -1, maxSeeds: 2.5 } },
    b: { strategy: 'popular', itemTypes: [], options: { contentWeight: 1 } },
  });
  assert.deepEqual(problems.sort(), [
    'environments.shop.lists.a.options.maxAgeDays must be >= 0',
    'environments.shop.lists.a.options.maxSeeds must be integer',
    "environments.shop.lists.b.options must NOT have additional properties 'contentWeight' (popular takes none)",
  ]);
  assert.deepEqual(problemsOf({ c: { strategy: 'item_to_item', itemTypes: [], options: 'many' } }), ['environments.shop.lists.c.options must be object']);
});

test('every strategy has a default for each of its options, within its own bounds', () => {
  for (const strategy of STRATEGIES) {
    const defaults = strategy.defaults;
    assert.deepEqual(Object.keys(defaults), Object.keys(strategy.optionsSchema), strategy.name);
    for (const [key, schema] of Object.entries(strategy.optionsSchema)) {
      assert.ok(defaults[key]! >= schema.minimum && defaults[key]! <= schema.maximum, `${strategy.name}.${key}`);
    }
  }
});

test("a list ranks through its strategy, its fallback's chain, popular and latest, then the whole catalog", () => {
  assert.deepEqual(names(strategyChain('personalized')), ['personalized', 'popular', 'latest', 'catalog']);
  assert.deepEqual(names(strategyChain('item_to_item')), ['item_to_item', 'popular', 'latest', 'catalog']);
  assert.deepEqual(names(strategyChain('trending')), ['trending', 'popular', 'latest', 'catalog']);
  assert.deepEqual(names(strategyChain('popular')), ['popular', 'latest', 'catalog']);
  assert.deepEqual(names(strategyChain('latest')), ['latest', 'popular', 'catalog']);
  assert.deepEqual(names(strategyChain('new_for_you')), ['new_for_you', 'latest', 'popular', 'catalog']);
  // The list's fallback replaces the strategy's own; repeats are skipped.
  assert.deepEqual(names(strategyChain('popular', 'trending')), ['popular', 'trending', 'latest', 'catalog']);
  assert.deepEqual(names(strategyChain('item_to_item', 'personalized')), ['item_to_item', 'personalized', 'popular', 'latest', 'catalog']);
  assert.deepEqual(names(strategyChain('latest', 'latest')), ['latest', 'popular', 'catalog']);
  assert.equal(strategyChain('personalized'), strategyChain('personalized'), 'kept, not rebuilt per request');
});
