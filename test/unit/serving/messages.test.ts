import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_CONFIG } from '../../../src/config/defaults.ts';
import { decodeRankTask, encodeRankTask, packReply, unpackReply, type BatchOutcome } from '../../../src/serving/messages.ts';

const ENVIRONMENTS = { demo: { ...DEFAULT_CONFIG.environments.demo!, lists: { ...DEFAULT_CONFIG.environments.demo!.lists, german: { strategy: 'latest' as const, itemTypes: ['article'], filters: { language: 'de' } } } } };

test('a rank task crosses as the request says it and comes out with each list completed from the configuration', () => {
  const wire = encodeRankTask('demo', 1_700_000_000, {
    userId: 'u1',
    deviceId: 'd1',
    context: { id: 'a1', type: 'article' },
    history: [{ id: 'h1', reconsumable: false, timestamp: 5 }],
    exclude: ['x1'],
    lists: [
      { name: 'recommended_for_you', size: 10, limit: 5, content: [] },
      { name: 'german', size: 3, limit: 3, filters: { categories: ['news'] }, content: [{ id: 'c1', rank: 1 }] },
    ],
  });
  assert.equal(typeof wire, 'string');
  const task = decodeRankTask(wire, ENVIRONMENTS);
  assert.deepEqual(task, {
    environment: 'demo',
    nowSec: 1_700_000_000,
    userId: 'u1',
    deviceId: 'd1',
    context: { id: 'a1', type: 'article' },
    history: [{ id: 'h1', reconsumable: false, timestamp: 5 }],
    exclude: ['x1'],
    lists: [
      { strategy: 'personalized', fallback: 'popular', size: 10, limit: 5, itemTypes: [], filters: [], content: [] },
      { strategy: 'latest', size: 3, limit: 3, itemTypes: ['article'], filters: [{ language: 'de' }, { categories: ['news'] }], content: [{ id: 'c1', rank: 1 }] },
    ],
  });
  const anonymous = decodeRankTask(encodeRankTask('demo', 1, { deviceId: 'd2', history: [], exclude: [], lists: [] }), ENVIRONMENTS);
  assert.deepEqual(anonymous, { environment: 'demo', nowSec: 1, deviceId: 'd2', history: [], exclude: [], lists: [] });
});

test('a packed reply gives back every outcome in task order, lists cut out whole', () => {
  const list = (ids: string[], shown: number) => ({
    ids: ids.join('\n'),
    ix: Uint32Array.from(ids.map((_, i) => i + 10 * ids.length)),
    itemsJson: JSON.stringify(ids.slice(0, shown).map((item_id, i) => ({ item_id, rank: i + 1 }))),
    shown,
  });
  const outcomes: BatchOutcome[] = [
    { lists: [list(['a', 'b', 'c'], 2), list(['ü', 'ß'], 2)] },
    { errors: [{ path: 'lists[0].list_content[0].id', message: "'q' is not an item of this environment" }] },
    { lists: [{ ...list(['i'], 1), information: ['title'] }] },
    { lists: [list([], 0)] },
    { failed: 'Error: boom' },
    { rankable: Uint8Array.of(1, 0) },
    { lists: [list(['x', 'y'], 1)] },
  ];
  const reply = packReply(7, 42, outcomes);
  // No ArrayBuffer per batch in the worker (messages.ts BatchReply: its scavenges at 1,000,000 items).
  assert.ok(Array.isArray(reply.ix) && Array.isArray(reply.layout), 'ix and layout are plain arrays');
  assert.equal(reply.threadId, 7);
  assert.equal(reply.seq, 42);
  assert.deepEqual(unpackReply(reply), outcomes);
});
