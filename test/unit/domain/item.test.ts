import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_NESTING_DEPTH, nestingDepth, toCategoryPaths } from '../../../src/domain/item.ts';

test('categories given as strings or paths become paths', () => {
  assert.deepEqual(toCategoryPaths(['news', ['news', 'world'], []]), [['news'], ['news', 'world'], []]);
});

test('nestingDepth counts object and array levels without recursion', () => {
  assert.equal(nestingDepth('x'), 0);
  assert.equal(nestingDepth({ a: 1 }), 1);
  assert.equal(nestingDepth({ a: [{ b: {} }] }), 4);
  let deep: unknown = {};
  for (let i = 0; i < 100_000; i++) deep = { a: deep };
  assert.equal(nestingDepth(deep), MAX_NESTING_DEPTH + 1, 'stops early past the limit');
});
