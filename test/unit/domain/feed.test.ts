import assert from 'node:assert/strict';
import { test } from 'node:test';
import { feedDefinitionProblems, formatInterval, parseInterval } from '../../../src/domain/feed.ts';

test('intervals read and print in s, m, h, d within 1 s to 30 days', () => {
  assert.equal(parseInterval('15m'), 900);
  assert.equal(parseInterval('90s'), 90);
  assert.equal(parseInterval('1d'), 86400);
  assert.equal(parseInterval('0s'), undefined);
  assert.equal(parseInterval('31d'), undefined);
  assert.equal(parseInterval('15 minutes'), undefined);
  assert.equal(formatInterval(900), '15m');
  assert.equal(formatInterval(90), '90s');
  assert.equal(formatInterval(7200), '2h');
});

test('a definition is checked beyond its shape: item type, URL, mapping, format options', () => {
  const base = { feedId: 'f', environment: 'demo', url: 'https://x/f', format: 'json' as const, itemType: 'article', intervalSec: 900 };
  assert.deepEqual(feedDefinitionProblems({ ...base, mapping: { id: 'item_id' } }, ['article']), []);
  assert.deepEqual(
    feedDefinitionProblems({ ...base, itemType: 'x', url: 'file:///etc/passwd', mapping: { a: 'item_type' }, delimiter: ';' }, ['article']).map(([f]) => f),
    [['item_type'], ['url'], ['mapping'], ['mapping', 'a'], ['delimiter']],
  );
  assert.deepEqual(feedDefinitionProblems({ ...base, format: 'rss', mapping: { guid: 'item_id' } }, ['article']).map(([f]) => f), [['mapping']]);
});
