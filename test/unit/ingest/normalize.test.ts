import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toItem, toTimestamp } from '../../../src/ingest/normalize.ts';

test('timestamps: RFC 3339 kept, RFC 822 and unix times converted, zone-less refused', () => {
  assert.deepEqual(toTimestamp('2024-05-01T10:00:00+02:00'), { iso: '2024-05-01T10:00:00+02:00' });
  assert.deepEqual(toTimestamp('2024-05-01 10:00:00+0200'), { iso: '2024-05-01T10:00:00+02:00' });
  assert.deepEqual(toTimestamp('Tue, 10 Jun 2003 04:00:00 GMT'), { iso: '2003-06-10T04:00:00.000Z' });
  assert.deepEqual(toTimestamp('Tue, 10 Jun 2003 04:00:00 -0300'), { iso: '2003-06-10T07:00:00.000Z' });
  assert.deepEqual(toTimestamp(1700000000), { iso: '2023-11-14T22:13:20.000Z' });
  assert.deepEqual(toTimestamp('1700000000000'), { iso: '2023-11-14T22:13:20.000Z' });
  assert.deepEqual(toTimestamp('2024-05-01T10:00:00'), { reason: "'2024-05-01T10:00:00' has no timezone offset" });
  assert.deepEqual(toTimestamp('Tue, 10 Jun 2003 04:00:00'), { reason: "'Tue, 10 Jun 2003 04:00:00' has no timezone" });
  assert.deepEqual(toTimestamp('soon'), { reason: "'soon' is not a date" });
  assert.deepEqual(toTimestamp({}), { reason: 'is not a timestamp' });
});

test('a candidate becomes an Item through the Items API schema, or a one-line reason', () => {
  assert.deepEqual(toItem({ environment: 'demo', item_type: 'article', item_id: 'a', categories: ['x'] }, 'demo', ['article']), {
    item: { environment: 'demo', item_type: 'article', item_id: 'a', categories: [['x']] },
  });
  assert.deepEqual(toItem({ environment: 'demo', item_type: 'podcast', item_id: 'a' }, 'demo', ['article']), {
    reason: "item_type 'podcast' is not an item type of environment 'demo' (article)",
  });
  assert.deepEqual(toItem({ environment: 'demo', item_type: 'article', item_id: 'a', title: 1, colour: 'red' }, 'demo', ['article']), {
    reason: '/colour is not a field of Item; /title must be string',
  });
});
