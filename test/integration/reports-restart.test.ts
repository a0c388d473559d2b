// The report counters' clicks and A/B units across restarts (builder/report-snapshot.ts), on a real
// server: they are snapshotted about once a minute, not written per click, so a process killed
// between snapshots restarts from the last one and replays the events after it to them alone. A
// purchase after the restart is attributed to a click made after the snapshot, and nothing is
// counted twice. A snapshot that fails its checksum is said in the log and the whole log replayed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { open } from 'lmdb';
import { waitFor } from '../helpers/api.ts';
import { getToken } from '../helpers/auth.ts';
import { sharedDataDir, startServer, type TestServer } from '../helpers/server.ts';
import { reportsStorePath } from '../../src/store/open.ts';

const today = () => new Date().toISOString().slice(0, 10);
const recommendation = { page_type: 'home', channel: 'www', list_name: 'popular', request_id: 'r1', user_group: 'affinity' };
const click = (user: string, item: string) => ({ event_type: 'click_on_recommendation', user_id: user, device_id: `d-${user}`, action_item: item, action_item_type: 'article', ...recommendation });
const purchase = (user: string, item: string) => ({ event_type: 'purchase', user_id: user, device_id: `d-${user}`, action_item: item, action_item_type: 'article', amount: 1, purchased_price: 4, channel: 'www' });

interface ReportsHealth {
  model_builder: { environments: Record<string, { reports_position: number | null }>; reports_snapshots: { count: number } | null } | null;
}

async function post(server: TestServer, events: unknown[]): Promise<void> {
  const res = await fetch(`${server.url}/api/demo/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ events }) });
  assert.equal(res.status, 200, await res.text());
}

/** Waits until the report counters have written up to `position`; returns their snapshots so far. */
async function reportsReach(server: TestServer, position: number): Promise<number> {
  return waitFor(`the report counters at ${position}`, async () => {
    const health = (await (await fetch(`${server.url}/health`)).json()) as ReportsHealth;
    const builder = health.model_builder;
    return (builder?.environments.demo?.reports_position ?? 0) >= position ? (builder!.reports_snapshots?.count ?? 0) : undefined;
  });
}

/** The `popular` list's totals today. */
async function popular(server: TestServer, token: string): Promise<Record<string, number | null>> {
  const res = await fetch(`${server.url}/api/demo/reports?from=${today()}&to=${today()}&breakdown=list_name`, { headers: { Authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200, await res.clone().text());
  const body = (await res.json()) as { totals: Array<{ value: string; metrics: Record<string, number | null> }> };
  return body.totals.find((t) => t.value === 'popular')!.metrics;
}

test('kill -9 between two snapshots: after the restart a purchase is attributed to a click made after the last snapshot, and no click is counted twice', async (t) => {
  const shared = sharedDataDir();
  t.after(() => shared.close());
  const first = shared.track(await startServer({ dataDir: shared.dataDir }));
  const client = first.demoClient!;
  await post(first, [click('u1', 'a1')]);
  // A fresh store's first commit is followed by the first snapshot; the next is a minute away.
  assert.ok((await reportsReach(first, 1)) >= 1, 'the first snapshot was written');
  await post(first, [click('u1', 'a2'), click('u2', 'a2')]);
  const snapshots = await reportsReach(first, 3);
  assert.equal(snapshots, 1, 'no second snapshot before the kill');
  first.proc.kill('SIGKILL');
  await first.exited;

  const second = shared.track(await startServer({ dataDir: shared.dataDir }));
  const token = await getToken(second, client);
  await post(second, [purchase('u1', 'a2'), purchase('u2', 'a1')]);
  await reportsReach(second, 5);
  const totals = await popular(second, token);
  // u1 clicked a2 after the snapshot: attributed. u2 never clicked a1: not.
  assert.deepEqual([totals.clicks, totals.conversions, totals.purchase, totals.revenue], [3, 1, 1, 4]);
});

test('a report state snapshot that fails its checksum is said in the log and the log replayed: attribution as before, counters unchanged', async (t) => {
  const shared = sharedDataDir();
  t.after(() => shared.close());
  const first = shared.track(await startServer({ dataDir: shared.dataDir }));
  const client = first.demoClient!;
  await post(first, [click('u1', 'a1'), click('u2', 'a2')]);
  await reportsReach(first, 2);
  // A stop writes the snapshot of what was applied.
  assert.equal(await first.stop(), 0);
  const root = open({ path: reportsStorePath(shared.dataDir), maxDbs: 4 });
  const model = root.openDB({ name: 'report-blobs', encoding: 'binary' });
  const chunk = ['demo', 'repsnap', 'chunk', 0];
  const bytes = Buffer.from(model.getBinary(chunk)!);
  bytes[bytes.length >> 1]! ^= 0xff;
  await model.put(chunk, bytes);
  await root.close();

  const second = shared.track(await startServer({ dataDir: shared.dataDir }));
  const token = await getToken(second, client);
  await waitFor('the log line', async () => (second.logs.some((l) => l.includes('stored snapshot not used') && l.includes('fails its checksum')) ? true : undefined));
  const before = await popular(second, token);
  assert.deepEqual([before.clicks, before.conversions ?? 0], [2, 0]);
  await post(second, [purchase('u2', 'a2')]);
  await reportsReach(second, 3);
  const after = await popular(second, token);
  assert.deepEqual([after.clicks, after.conversions, after.purchase, after.revenue], [2, 1, 1, 4]);
});
