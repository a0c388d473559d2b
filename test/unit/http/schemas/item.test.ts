import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseItemBody } from '../../../../src/domain/item-schema.ts';

const BASE = { environment: 'demo', item_id: 'x', item_type: 'article' };

function errorsOf(body: unknown) {
  const result = parseItemBody(body);
  assert.ok('errors' in result, 'expected validation errors');
  return result.errors;
}

test('a minimal item and a complete item are accepted', () => {
  assert.deepEqual(parseItemBody(BASE), { item: BASE });
  const full = {
    ...BASE,
    title: 't',
    description: 'd',
    content_body: 'c',
    uri: 'https://e.com/x',
    categories: ['a', ['a', 'b']],
    tags: ['t'],
    images: ['https://e.com/i.jpg', { url: 'https://e.com/j.jpg', alt: 'j' }],
    language: 'en',
    item_attributes: { name: 'specs', value: { weight: 3 } },
    publication_datetime: '2024-01-01T00:00:00.123+05:30',
    end_datetime: '2025-01-01T00:00:00Z',
    access_type: 'paid',
    flags: ['f'],
    parent: 'p',
    ancestry_level: 'model',
  };
  assert.deepEqual(parseItemBody(full), { item: { ...full, categories: [['a'], ['a', 'b']] } });
  assert.ok('item' in parseItemBody({ ...BASE, item_attributes: { author: 'Ann', colour: 'red' } }));
});

test('timestamps without an offset, or impossible dates, are rejected by field', () => {
  assert.deepEqual(errorsOf({ ...BASE, publication_datetime: '2024-01-01T00:00:00' }), [
    { path: '/publication_datetime', message: 'must be an ISO 8601 timestamp with a timezone offset or Z' },
  ]);
  assert.equal(errorsOf({ ...BASE, end_datetime: '2024-02-30T00:00:00Z' })[0]?.path, '/end_datetime');
  assert.equal(errorsOf({ ...BASE, end_datetime: '2024-01-01' })[0]?.path, '/end_datetime');
});

test('unknown fields, missing required fields and wrong types name the field', () => {
  assert.deepEqual(errorsOf({ ...BASE, titel: 'x' }), [{ path: '/titel', message: 'is not a field of Item' }]);
  assert.deepEqual(errorsOf({ item_id: 'x', item_type: 'article' }), [{ path: '/environment', message: 'is required' }]);
  assert.deepEqual(errorsOf({ ...BASE, title: 5 }), [{ path: '/title', message: 'must be string' }]);
  assert.deepEqual(errorsOf({ ...BASE, categories: [5] }), [
    { path: '/categories/0', message: 'does not match any documented shape' },
  ]);
  assert.deepEqual(errorsOf({ ...BASE, item_attributes: { a: 1 } }), [
    { path: '/item_attributes', message: 'does not match any documented shape' },
  ]);
  assert.equal(errorsOf({ ...BASE, ancestry_level: 'top' })[0]?.path, '/ancestry_level');
  assert.equal(errorsOf([BASE])[0]?.path, '');
  assert.equal(errorsOf({ ...BASE, item_id: 'x'.repeat(257) })[0]?.path, '/item_id');
  assert.equal(errorsOf({ ...BASE, item_id: 'a\u0000b' })[0]?.path, '/item_id');
});

test('free-form attribute values nested past the limit are rejected', () => {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < 50; i++) value = { v: value };
  assert.deepEqual(errorsOf({ ...BASE, item_attributes: { name: 'deep', value } }), [
    { path: '/item_attributes', message: 'must not nest deeper than 16 levels' },
  ]);
});
