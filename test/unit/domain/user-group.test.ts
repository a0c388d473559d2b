import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assignUserGroup, bucketOf, isControlGroup } from '../../../src/domain/user-group.ts';

const CONFIG = { serviceGroup: 'affinity', controlGroups: { customer: 0.2, cms: 0.1 } };

test('the same user always lands in the same group, and shares are honoured', () => {
  assert.equal(assignUserGroup(CONFIG, 'demo', 'u1', 'd1'), assignUserGroup(CONFIG, 'demo', 'u1', 'other-device'));
  const counts: Record<string, number> = {};
  for (let i = 0; i < 20_000; i++) {
    const g = assignUserGroup(CONFIG, 'demo', undefined, `device-${i}`);
    counts[g] = (counts[g] ?? 0) + 1;
  }
  assert.ok(Math.abs(counts.customer! / 20_000 - 0.2) < 0.015, `customer share ${counts.customer}`);
  assert.ok(Math.abs(counts.cms! / 20_000 - 0.1) < 0.015, `cms share ${counts.cms}`);
  assert.ok(Math.abs(counts.affinity! / 20_000 - 0.7) < 0.015, `service share ${counts.affinity}`);
});

test('no-consent devices always get the service group; zero shares are never assigned', () => {
  const all = { serviceGroup: 'affinity', controlGroups: { customer: 1 } };
  assert.equal(assignUserGroup(all, 'demo', undefined, 'no-consent'), 'affinity');
  assert.equal(assignUserGroup(all, 'demo', undefined, 'd1'), 'customer');
  const none = { serviceGroup: 'affinity', controlGroups: { customer: 0 } };
  for (let i = 0; i < 1000; i++) assert.equal(assignUserGroup(none, 'demo', `u${i}`, 'd'), 'affinity');
});

test('buckets differ across environments and lie in [0, 1)', () => {
  const a = bucketOf('demo', 'u1');
  assert.ok(a >= 0 && a < 1);
  assert.notEqual(a, bucketOf('shop', 'u1'));
});

test('only configured control groups are control groups', () => {
  assert.equal(isControlGroup(CONFIG, 'customer'), true);
  assert.equal(isControlGroup(CONFIG, 'affinity'), false);
  assert.equal(isControlGroup(CONFIG, 'toString'), false);
});
