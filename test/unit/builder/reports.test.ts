// builder/reports.ts on real LMDB: clicks and A/B units live in memory and in a snapshot with the log
// position it covers; a restart loads it and replays the events after it to them alone (the
// counters already hold them); counters stay exact across flushes that drop the counter slot
// registry; clicked items are counted in chunks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TrackedEvent } from '../../../src/domain/event.ts';
import { ReportState } from '../../../src/builder/reports.ts';
import type { Store } from '../../../src/store/open.ts';
import { readTopItems } from '../../../src/store/report-reader.ts';
import { clickedCountsKey, dayOf, rollupKey, unitKey, type Rollup } from '../../../src/store/report-keys.ts';
import { copyU32 } from '../../../src/store/model-layout.ts';
import { withModelStore } from '../../helpers/model-store.ts';

const T = Date.UTC(2026, 0, 5, 10);
const item = { action_item_type: 'article', action_item: 'a1' };

const rollup = (store: Store, t = T) => store.reportState.get(rollupKey('demo', 'd', dayOf(t), 'builder')) as Rollup;
const click = (list: string, more: Partial<TrackedEvent> = {}) =>
  ({ event_type: 'click_on_recommendation', user_id: 'u1', list_name: list, user_group: 'affinity', ...item, ...more }) as TrackedEvent;
const purchase = (more: Partial<TrackedEvent> = {}) => ({ event_type: 'purchase', user_id: 'u1', amount: 2, purchased_price: 1.5, ...item, ...more }) as TrackedEvent;

/** The counters' flush, then the snapshot when due (`final`: always), as the builder's thread runs them. */
function flush(store: Store, reports: ReportState, position: number, final = false): boolean {
  store.reportsRoot.transactionSync(reports.prepareFlush());
  const snapshot = reports.prepareSnapshot(position, final);
  if (snapshot) store.reportsRoot.transactionSync(snapshot);
  return snapshot !== undefined;
}

/** Every stored record of the report counters but the snapshot's: what a replay must leave as it was. */
const counters = (store: Store) => [...store.reportState.getRange({ start: ['demo'], end: ['demo\u0000'] })].filter(({ key }) => (key as string[])[1] !== 'repsnap');

test('a click repeated is kept as its latest in the snapshot, no record of its own, and a purchase after a restart is attributed to it', async () => {
  await withModelStore((store) => {
    const reports = new ReportState(store, 'demo', 3600);
    reports.apply(T, click('trending'));
    reports.apply(T + 1000, click('popular'));
    // A fresh state snapshots at its first flush.
    assert.equal(flush(store, reports, 2), true);
    assert.equal(store.reportState.get(['demo', 'click', 'u1', 'article\u0000a1']), undefined);
    assert.equal(store.reportState.get(unitKey('demo', dayOf(T), 'affinity', 'u1')), undefined);
    const restarted = new ReportState(store, 'demo', 3600, 2);
    assert.equal(restarted.resumeFrom, 2);
    assert.equal(restarted.problem, undefined);
    restarted.apply(T + 2000, purchase());
    flush(store, restarted, 3, true);
    assert.deepEqual(rollup(store)['list_name\u0000popular'], { clicks: 1, conversions: 1, purchase: 1, revenue: 3 });
    assert.deepEqual(rollup(store)['list_name\u0000trending'], { clicks: 1 });
    assert.deepEqual(rollup(store)['user_group\u0000affinity'], { clicks: 2, users: 1, conversions: 1, purchase: 1, revenue: 3, revenue_sq: 9, converters: 1 });
  });
});

test('a restart replays the events after the snapshot to the clicks and units alone: counters unchanged, then attribution as if never stopped', async () => {
  await withModelStore((store) => {
    const events: Array<[number, TrackedEvent]> = [
      [T, click('trending', { action_item: 'a0' })],
      [T + 10, { event_type: 'impression', user_id: 'u2', user_group: 'baseline', list_name: 'popular', ...item } as TrackedEvent],
      // After the snapshot, counted and flushed but not snapshotted (the next is a minute away).
      [T + 20, click('popular')],
      [T + 30, { event_type: 'impression', user_id: 'u3', user_group: 'baseline', list_name: 'popular', ...item } as TrackedEvent],
    ];
    const reports = new ReportState(store, 'demo', 3600);
    reports.apply(...events[0]!);
    reports.apply(...events[1]!);
    assert.equal(flush(store, reports, 2), true);
    reports.apply(...events[2]!);
    reports.apply(...events[3]!);
    assert.equal(flush(store, reports, 4), false);
    const before = counters(store);
    const restarted = new ReportState(store, 'demo', 3600, 4);
    assert.equal(restarted.resumeFrom, 2);
    restarted.apply(...events[2]!);
    restarted.apply(...events[3]!);
    flush(store, restarted, 4);
    assert.deepEqual(counters(store), before);
    // Counting again: the click replayed is found, and the units replayed are not new users.
    restarted.apply(T + 40, purchase());
    restarted.apply(T + 50, { event_type: 'impression', user_id: 'u3', user_group: 'baseline', list_name: 'popular', ...item } as TrackedEvent);
    flush(store, restarted, 6, true);
    const counts = rollup(store);
    assert.deepEqual(counts['list_name\u0000popular'], { impressions: 3, clicks: 1, conversions: 1, purchase: 1, revenue: 3 });
    assert.deepEqual(counts['user_group\u0000baseline'], { impressions: 3, users: 2 });
    assert.equal(counts['user_group\u0000affinity']!.users, 1);
    assert.equal(counts['event_type\u0000click_on_recommendation']!.events, 2);
  });
});

test('a snapshot that fails its checksum is not used: the problem is said and the whole log is replayed to the clicks and units', async () => {
  await withModelStore((store) => {
    const reports = new ReportState(store, 'demo', 3600);
    reports.apply(T, click('popular'), 5);
    flush(store, reports, 1, true);
    const chunk = ['demo', 'repsnap', 'chunk', 0];
    const bytes = Buffer.from(store.reportBlobs.getBinary(chunk)!);
    bytes[bytes.length - 1]! ^= 0xff;
    store.reportBlobs.putSync(chunk, bytes);
    const before = counters(store);
    const restarted = new ReportState(store, 'demo', 3600, 1);
    assert.match(restarted.problem ?? '', /report state snapshot at position 1 fails its checksum/);
    assert.equal(restarted.resumeFrom, 0);
    restarted.apply(T, click('popular'), 5);
    flush(store, restarted, 1);
    assert.deepEqual(counters(store), before);
    restarted.apply(T + 1000, purchase());
    flush(store, restarted, 2, true);
    assert.deepEqual(rollup(store)['list_name\u0000popular'], { clicks: 1, conversions: 1, purchase: 1, revenue: 3 });
    // The clicked items' chunks were written with the snapshot: the replay does not count the click again.
    assert.equal(copyU32(store.reportState.get(clickedCountsKey('demo', dayOf(T), 0)) as Uint8Array)[5], 1);
    // The snapshot written since is whole again.
    assert.equal(new ReportState(store, 'demo', 3600, 2).problem, undefined);
  });
});

test('a store written before snapshots (a record per click, no snapshot) resumes at its position and attributes from the records', async () => {
  await withModelStore((store) => {
    store.reportState.putSync(['demo', 'click', 'u1', 'article\u0000a1'], { t: T, list_name: 'popular', user_group: 'affinity' });
    store.reportState.putSync(['demo', 'pos', 'reports'], 7);
    const reports = new ReportState(store, 'demo', 3600, 7);
    assert.deepEqual([reports.resumeFrom, reports.problem], [7, undefined]);
    reports.apply(T + 1000, purchase());
    flush(store, reports, 8);
    assert.deepEqual(rollup(store)['list_name\u0000popular'], { conversions: 1, purchase: 1, revenue: 3 });
  });
});

test('a snapshot drops clicks past the attribution window and writes the units of days before yesterday a record each, still found', async () => {
  await withModelStore((store) => {
    const reports = new ReportState(store, 'demo', 3600);
    reports.apply(T, click('popular'));
    const later = T + 3 * 86_400_000;
    reports.apply(later, { event_type: 'page_visit', user_id: 'u9' } as TrackedEvent);
    flush(store, reports, 2, true);
    assert.deepEqual(store.reportState.get(unitKey('demo', dayOf(T), 'affinity', 'u1')), [0, 0]);
    // The click is past the window: a purchase now is not attributed, and nothing was written of it.
    assert.equal(store.reportState.get(['demo', 'click', 'u1', 'article\u0000a1']), undefined);
    const restarted = new ReportState(store, 'demo', 3600, 2);
    restarted.apply(later + 1000, purchase());
    // An impression on the old day (a clock stepped back) finds its unit: not a new user.
    restarted.apply(T + 5, { event_type: 'impression', user_id: 'u1', user_group: 'affinity', list_name: 'popular', ...item } as TrackedEvent);
    flush(store, restarted, 4, true);
    assert.equal(rollup(store, later)['event_type\u0000purchase']!.events, 1);
    assert.equal(rollup(store, later)['list_name\u0000popular'], undefined);
    assert.deepEqual(rollup(store)['user_group\u0000affinity'], { clicks: 1, users: 1, impressions: 1 });
  });
});

test('units dropped from memory are written a record each only when their record is not already what memory holds', async () => {
  await withModelStore((store) => {
    const day = dayOf(T);
    // Records from before snapshots: u1 read and left as it is, u2 read and changed by a purchase.
    store.reportState.putSync(unitKey('demo', day, 'affinity', 'u1'), [0, 0]);
    store.reportState.putSync(unitKey('demo', day, 'affinity', 'u2'), [0, 0]);
    store.reportState.putSync(['demo', 'click', 'u2', 'article\u0000a1'], { t: T, list_name: 'popular', user_group: 'affinity' });
    const reports = new ReportState(store, 'demo', 3600, 5);
    const impression = (user: string) => ({ event_type: 'impression', user_id: user, user_group: 'affinity', list_name: 'popular', ...item }) as TrackedEvent;
    reports.apply(T, impression('u1'));
    reports.apply(T, impression('u2'));
    reports.apply(T + 1, purchase({ user_id: 'u2' }));
    reports.apply(T + 2, impression('u3'));
    // Behind the state's back: had u1's unit been written again, this would be undone.
    store.reportState.putSync(unitKey('demo', day, 'affinity', 'u1'), [7, 1]);
    reports.apply(T + 3 * 86_400_000, { event_type: 'page_visit', user_id: 'u9' } as TrackedEvent);
    flush(store, reports, 10, true);
    assert.deepEqual(store.reportState.get(unitKey('demo', day, 'affinity', 'u1')), [7, 1]);
    assert.deepEqual(store.reportState.get(unitKey('demo', day, 'affinity', 'u2')), [3, 1]);
    assert.deepEqual(store.reportState.get(unitKey('demo', day, 'affinity', 'u3')), [0, 0]);
    // Counted as users once: u3 only (u1 and u2 had records).
    assert.equal(rollup(store)['user_group\u0000affinity']!.users, 1);
  });
});

test('past 250,000 clicks a snapshot writes the oldest a record each and keeps the newest in memory: both still attributed after a restart', { timeout: 120_000 }, async () => {
  await withModelStore((store) => {
    const reports = new ReportState(store, 'demo', 3600);
    const n = 260_000;
    for (let i = 0; i < n; i++) reports.apply(T + i, click('popular', { user_id: `u${i}`, user_group: undefined, action_item: `a${i % 7}` }));
    // Over the bound: due at once, not a minute later.
    assert.equal(flush(store, reports, n), true);
    assert.ok(store.reportState.get(['demo', 'click', 'u0', 'article\u0000a0']), 'the oldest click is written a record');
    assert.equal(store.reportState.get(['demo', 'click', `u${n - 1}`, `article\u0000a${(n - 1) % 7}`]), undefined);
    const restarted = new ReportState(store, 'demo', 3600, n);
    restarted.apply(T + n, purchase({ user_id: 'u0', action_item: 'a0' }));
    restarted.apply(T + n, purchase({ user_id: `u${n - 1}`, action_item: `a${(n - 1) % 7}` }));
    restarted.apply(T + n, purchase({ user_id: 'u1', action_item: 'a6' }));
    flush(store, restarted, n + 3, true);
    assert.deepEqual(rollup(store)['list_name\u0000popular'], { clicks: n, conversions: 2, purchase: 2, revenue: 6 });
  });
});

test('clicked items are counted in chunks of items, and the top clicked items read them beside records written a record per item before', async () => {
  await withModelStore((store) => {
    for (const ix of [3, 300, 301]) store.indexItems.putSync(['demo', ix], ['article', `a${ix}`]);
    const day = dayOf(T);
    store.reportState.putSync(['demo', 'repi', day, 'clicked', 301], 5);
    const reports = new ReportState(store, 'demo', 3600);
    reports.apply(T, click('popular', { action_item: 'a3' }), 3);
    reports.apply(T, click('popular', { action_item: 'a300' }), 300);
    reports.apply(T, click('popular', { action_item: 'a300' }), 300);
    // Written with the snapshot, not at the one-second commit.
    assert.equal(flush(store, reports, 3), true);
    reports.apply(T + 1, click('popular', { action_item: 'a3' }), 3);
    assert.equal(flush(store, reports, 4), false);
    assert.equal(copyU32(store.reportState.get(clickedCountsKey('demo', day, 0)) as Uint8Array)[3], 1);
    assert.equal(copyU32(store.reportState.get(clickedCountsKey('demo', day, 1)) as Uint8Array)[300 - 256], 2);
    // After a restart the click after the snapshot is counted again from the log, once.
    const restarted = new ReportState(store, 'demo', 3600, 4);
    restarted.apply(T + 1, click('popular', { action_item: 'a3' }), 3);
    flush(store, restarted, 4, true);
    assert.deepEqual(
      readTopItems(store, 'demo', 'clicked', day, day, 10).map((i) => [i.item_id, i.count]),
      [['a301', 5], ['a3', 2], ['a300', 2]],
    );
  });
});

test('counts stay exact across a flush that drops the slot registry (over 10,000 list names)', async () => {
  await withModelStore((store) => {
    const reports = new ReportState(store, 'demo', 3600);
    const impression = (list: string) => reports.apply(T, { event_type: 'impression', list_name: list, ...item } as TrackedEvent);
    for (let i = 0; i < 12_000; i++) impression(`list${i}`);
    store.reportsRoot.transactionSync(reports.prepareFlush());
    impression('list5');
    impression('fresh');
    impression('fresh');
    store.reportsRoot.transactionSync(reports.prepareFlush());
    const counts = rollup(store);
    assert.deepEqual(counts['list_name\u0000list5'], { impressions: 2 });
    assert.deepEqual(counts['list_name\u0000list11999'], { impressions: 1 });
    assert.deepEqual(counts['list_name\u0000fresh'], { impressions: 2 });
    assert.deepEqual(counts['event_type\u0000impression'], { events: 12_003 });
  });
});
