// The `feeds` of an environment in the configuration file: defaults empty, unknown keys and
// definitions that could never poll refused by key before the service starts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../../src/config/load.ts';
import { configFile, configProblems as problemsOf } from '../../helpers/config.ts';

function withEnvironment(demo: Record<string, unknown>): NodeJS.ProcessEnv {
  return { AFFINITY_CONFIG: configFile('c.json', JSON.stringify({ environments: { demo: { itemTypes: ['article'], ...demo } } })) };
}

test('feeds default to none, and a valid feed loads with its keys', () => {
  assert.deepEqual(loadConfig({}).environments.demo?.feeds, {});
  assert.equal(loadConfig({}).ingest.imports.batchRows, 2000);
  const config = loadConfig(withEnvironment({ feeds: { news: { url: 'https://x/rss', format: 'rss', itemType: 'article', interval: '5m', disableMarker: { field: 'category', value: 'hidden' } } } }));
  assert.equal(config.environments.demo?.feeds.news?.interval, '5m');
});

test('an unknown feed key, a bad interval, a wrong item type or a mapped feed without item_id is refused by key', () => {
  assert.deepEqual(problemsOf(withEnvironment({ feeds: { news: { url: 'https://x/rss', format: 'rss', itemType: 'article', intervall: '5m' } } })), [
    "environments.demo.feeds.news must NOT have additional properties 'intervall'",
  ]);
  assert.deepEqual(
    problemsOf(withEnvironment({ feeds: { news: { url: 'ftp://x', format: 'json', itemType: 'video', interval: '0s', itemsPath: 'a', mapping: { name: 'title' } } } })),
    [
      'environments.demo.feeds.news.interval must be from 1s to 30d',
      "environments.demo.feeds.news.itemType 'video' is not an item type of environment 'demo' (article)",
      'environments.demo.feeds.news.url must be an http or https URL',
      'environments.demo.feeds.news.mapping must map a source field to item_id for a json feed',
    ],
  );
  assert.deepEqual(problemsOf({ AFFINITY_IMPORT_BATCH_ROWS: 'many' }), ["AFFINITY_IMPORT_BATCH_ROWS must be an integer, got 'many'"]);
});
