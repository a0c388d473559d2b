// model/reports.ts on real LMDB: a click repeated before a flush is stored once with its latest
// memory, and counters stay exact across flushes that drop the counter slot registry.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TrackedEvent } from '../../../src/domain/event.ts';
import { ReportState } from '../../../src/model/reports.ts';
import type { Store } from '../../../src/store/open.ts';
import { dayOf, rollupKey, type Rollup } from '../../../src/store/report-keys.ts';
import { withModelStore } from '../../helpers/model-store.ts';

const T = Date.UTC(2026, 0, 5, 10);
const item = { action_item_type: 'article', action_item: 'a1' };

const rollup = (store: Store) => store.modelState.get(rollupKey('demo', 'd', dayOf(T), 'builder')) as Rollup;

test('a click repeated before a flush is stored once, as its latest, and a purchase after a restart is attributed to it', async () => {
  await withModelStore((store) => {
    const reports = new ReportState(store, 'demo', 3600, true);
    const click = (list: string, t: number) =>
      reports.add({ event_type: 'click_on_recommendation', user_id: 'u1', list_name: list, ...item } as TrackedEvent, t);
    click('trending', T);
    click('popular', T + 1000);
    store.modelRoot.transactionSync(reports.prepareFlush());
    const stored = store.modelState.get(['demo', 'click', 'u1', 'article\u0000a1']) as { t: number; list_name: string };
    assert.deepEqual([stored.t, stored.list_name], [T + 1000, 'popular']);
    // Not fresh: the click is read back from LMDB.
    const restarted = new ReportState(store, 'demo', 3600);
    restarted.add({ event_type: 'purchase', user_id: 'u1', amount: 2, purchased_price: 1.5, ...item } as TrackedEvent, T + 2000);
    store.modelRoot.transactionSync(restarted.prepareFlush());
    assert.deepEqual(rollup(store)['list_name\u0000popular'], { clicks: 1, conversions: 1, purchase: 1, revenue: 3 });
    assert.deepEqual(rollup(store)['list_name\u0000trending'], { clicks: 1 });
  });
});

test('counts stay exact across a flush that drops the slot registry (over 10,000 list names)', async () => {
  await withModelStore((store) => {
    const reports = new ReportState(store, 'demo', 3600, true);
    const impression = (list: string) => reports.add({ event_type: 'impression', list_name: list, ...item } as TrackedEvent, T);
    for (let i = 0; i < 12_000; i++) impression(`list${i}`);
    store.modelRoot.transactionSync(reports.prepareFlush());
    impression('list5');
    impression('fresh');
    impression('fresh');
    store.modelRoot.transactionSync(reports.prepareFlush());
    const counts = rollup(store);
    assert.deepEqual(counts['list_name\u0000list5'], { impressions: 2 });
    assert.deepEqual(counts['list_name\u0000list11999'], { impressions: 1 });
    assert.deepEqual(counts['list_name\u0000fresh'], { impressions: 2 });
    assert.deepEqual(counts['event_type\u0000impression'], { events: 12_003 });
  });
});
