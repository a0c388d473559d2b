// The model builder stopped and restarted in the middle of a log ends with the same state as one
// that read the log without stopping (every event applied exactly once, nothing lost), and the
// same as one that starts with nothing written (a fresh environment skips first-touch reads, so a
// key it should have read would show here). The real builder worker on real LMDB in temp data
// directories, the builder in processes of its own (test/helpers/build-model.ts). The catalog has
// fewer items than maxNeighbours, so no row is cut and the state does not depend on when flushes
// happen. Each stop is asked for as the builder starts, so it lands at a chunk boundary after at
// least one chunk (not wherever a timer fell: stops timed 40-300 ms could land before the first
// chunk or after the last); where each landed is checked to be inside the log. A builder started
// on the former layout (histories and consumed sets as records apart) moves them into consumer
// records and ends with the same state as the builder that wrote those. A builder started on a
// store whose report counters the model's thread kept (no position of their own) continues them
// from its position: the same state again, where counting from the log's start would double them.
import { mulberry32 } from '../../scripts/synthetic/random.ts';
import assert from 'node:assert/strict';
import { cpSync, rmSync } from 'node:fs';
import { test, type TestContext } from 'node:test';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { open } from 'lmdb';
import { DEFAULT_CONFIG } from '../../src/config/defaults.ts';
import type { TrackedEvent } from '../../src/domain/event.ts';
import { EventLog } from '../../src/store/event-log.ts';
import { decodeConsumerRecord, LEGACY_CONSUMER_KINDS, neighboursWords } from '../../src/store/model-layout.ts';
import { modelStorePath, reportsStorePath, Store } from '../../src/store/open.ts';
import { tempDir } from '../helpers/server.ts';

const run = promisify(execFile);
const EVENTS = 30_000;
const USERS = 300;
const ITEMS = 60;

/** A mix with links (anonymous devices that later log in), no-consent devices, clicks and conversions. */
function batch(next: () => number, n: number): TrackedEvent[] {
  const out: TrackedEvent[] = [];
  for (let k = 0; k < 10; k++) {
    const u = Math.floor(next() * USERS);
    const item = { action_item_type: 'article', action_item: `i${Math.floor(next() ** 2 * ITEMS)}` };
    // Devices of the first third stay anonymous until n passes 1,000 batches, then log in.
    const loggedIn = u >= USERS / 3 || n > 1000;
    const who = { device_id: u % 50 === 0 ? 'no-consent' : `d${u}`, user_id: loggedIn ? `u${u}` : null, channel: 'www' };
    const recommendation = { page_type: 'home', list_name: k % 2 ? 'popular' : 'trending', request_id: 'r', user_group: u % 3 ? 'affinity' : 'customer' };
    const type = ['detail_pageview', 'detail_pageview', 'impression', 'click_on_recommendation', 'add_to_cart', 'purchase', 'item_interaction', 'page_visit'][Math.floor(next() * 8)]!;
    if (type === 'page_visit') out.push({ event_type: type, page_type: 'home', ...who } as TrackedEvent);
    else if (type === 'impression' || type === 'click_on_recommendation') out.push({ event_type: type, ...who, ...item, ...recommendation } as TrackedEvent);
    else if (type === 'purchase') out.push({ event_type: type, ...who, ...item, amount: 1, purchased_price: 2.5 } as TrackedEvent);
    else out.push({ event_type: type, page_type: 'article_detail', interaction_type: 'like', amount: 1, ...who, ...item } as TrackedEvent);
  }
  return out;
}

async function writeLog(dataDir: string): Promise<void> {
  const store = new Store({ ...DEFAULT_CONFIG.store, dataDir });
  const log = new EventLog(store);
  const next = mulberry32(5);
  const start = Date.now() - 3 * 3600_000;
  // Not awaited one by one: lmdb-js batches queued appends into few commits (in order).
  const appended: Array<Promise<unknown>> = [];
  for (let n = 0; n < EVENTS / 10; n++) {
    const events = batch(next, n);
    appended.push(log.append('demo', events, start + n * 1000));
  }
  await Promise.all(appended);
  await store.close();
}

const BUILD = fileURLToPath(new URL('../helpers/build-model.ts', import.meta.url));

/**
 * Runs the builder on `dataDir` (test/helpers/build-model.ts), stopping after each of `pausesMs`
 * and starting again, then to the end; returns the event position each stop left written.
 */
async function build(dataDir: string, pausesMs: number[]): Promise<number[]> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', BUILD, dataDir, String(EVENTS), pausesMs.join(',')]);
  return JSON.parse(stdout) as number[];
}

/** The builder's databases by environment folder: raw bytes, else msgpack (store/open.ts). */
const BUILDER_DATABASES = [
  { path: modelStorePath, name: 'model', binary: true },
  { path: modelStorePath, name: 'model-state', binary: false },
  { path: reportsStorePath, name: 'report-state', binary: false },
  { path: reportsStorePath, name: 'report-blobs', binary: true },
];

/** Every key the builder writes (model, model-state, report-state, report-blobs), values decoded; positions included. */
async function dump(dataDir: string): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  for (const { path, name, binary } of BUILDER_DATABASES) {
    const root = open({ path: path(dataDir), maxDbs: 4, readOnly: true });
    const db = root.openDB({ name, encoding: binary ? 'binary' : 'msgpack' });
    for (const { key, value } of db.getRange({})) out.set(`${name} ${JSON.stringify(key)}`, binary ? hexOf(key, value as Uint8Array) : value);
    await root.close();
  }
  return out;
}

/**
 * A binary value as hex; a neighbour row without the event position it was written at (where
 * the stops fell decides when each row was written, not what it holds).
 */
function hexOf(key: unknown, value: Uint8Array): string {
  const bytes = Buffer.from(value);
  if ((key as unknown[])[1] !== 'nb') return bytes.toString('hex');
  return bytes.subarray(0, neighboursWords(bytes.readUInt32LE(0)) * 4).toString('hex');
}

/** Every key and value of `expected` in `got`, and no other key. */
function assertSameState(got: Map<string, unknown>, expected: Map<string, unknown>): void {
  assert.deepEqual([...got.keys()].sort(), [...expected.keys()].sort());
  for (const [key, value] of expected) assert.deepEqual(got.get(key), value, key);
}

/** Two temporary data directories, removed after the test: a log built to its end, and a copy of it. */
async function builtAndCopy(t: TestContext, prefix: string): Promise<[written: string, copy: string]> {
  const [written, copy] = [tempDir(prefix), tempDir(prefix)];
  t.after(() => {
    for (const dir of [written, copy]) rmSync(dir, { recursive: true, force: true });
  });
  await writeLog(written);
  await build(written, []);
  cpSync(written, copy, { recursive: true });
  return [written, copy];
}

test('a builder stopped and restarted mid-log writes the same state as one that never stopped', { timeout: 400_000 }, async (t) => {
  const dirs = [tempDir('affinity-restart-'), tempDir('affinity-restart-'), tempDir('affinity-restart-')];
  t.after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const [straight, restarted, other] = dirs as [string, string, string];
  await writeLog(straight);
  cpSync(straight, restarted, { recursive: true });
  cpSync(straight, other, { recursive: true });
  // Three data directories, three processes: run side by side (most of a run is starting processes and workers).
  // Stopped four times (each a chunk or more further on) and once, each time as soon as it started.
  const [, restartedStops, otherStops] = await Promise.all([build(straight, []), build(restarted, [0, 0, 0, 0]), build(other, [0])]);
  for (const [name, stops, count] of [['restarted', restartedStops, 4], ['other', otherStops, 1]] as const) {
    assert.equal(stops.length, count, `${name}: a position per stop`);
    stops.forEach((position, i) => {
      assert.ok(position > (stops[i - 1] ?? 0) && position < EVENTS, `${name}: stop ${i + 1} at ${position} of ${EVENTS} events, after ${stops[i - 1] ?? 0}: not inside the log`);
    });
  }
  const expected = await dump(straight);
  assert.ok([...expected.keys()].some((k) => k.includes('"nb"')), 'co-occurrence rows were written');
  assert.ok([...expected.keys()].some((k) => k.includes('"link"')), 'devices were linked');
  // The report counters' clicks and A/B units, in their snapshot (the same bytes: the same state).
  assert.ok([...expected.keys()].some((k) => k.includes('"repsnap"')), 'the report state was snapshotted');
  assert.ok([...expected.keys()].some((k) => k.includes('"repk"')), 'clicked items were counted');
  for (const dir of [restarted, other]) assertSameState(await dump(dir), expected);
});

test("a builder started on histories and consumed sets stored apart (before the consumer records) moves them into consumer records: the same state as a builder that wrote them", { timeout: 400_000 }, async (t) => {
  const [written, legacy] = await builtAndCopy(t, 'affinity-records-');
  // The former layout: each consumer record as a history record and a consumed-set record.
  const root = open({ path: modelStorePath(legacy), maxDbs: 4 });
  const model = root.openDB({ name: 'model', encoding: 'binary' });
  let users = 0;
  const records = Array.from(model.getRange({ start: ['demo', 'd'], end: ['demo', 'v'] }), ({ key, value }) => ({ key, value: Buffer.from(value as Uint8Array) }));
  await root.transaction(() => {
    for (const { key, value } of records) {
      const [env, kind, id] = key as [string, string, string];
      if (kind !== 'u' && kind !== 'd') continue;
      const { entries, ix } = decodeConsumerRecord(value);
      const [historyKind, consumedKind] = LEGACY_CONSUMER_KINDS[kind];
      if (entries.length > 0) model.put([env, historyKind, id], Buffer.from(Uint32Array.from(entries).buffer));
      if (ix.length > 0) model.put([env, consumedKind, id], Buffer.from(Uint32Array.from(ix).buffer));
      model.remove(key);
      if (kind === 'u') users++;
    }
  });
  await root.close();
  assert.ok(users > USERS / 2, `${users} users' records rewritten in the former layout`);
  await build(legacy, []);
  const expected = await dump(written);
  const got = await dump(legacy);
  assert.ok(![...got.keys()].some((k) => /"(hu|hd|cu|cd)"/.test(k)), 'no record of the former layout is left');
  assertSameState(got, expected);
});

test('a builder started on reports kept by the model thread (no reports position) continues them from its position: the same state as a builder whose reports had their own', { timeout: 400_000 }, async (t) => {
  const [written, kept] = await builtAndCopy(t, 'affinity-reports-');
  // The former layout: the reports were written with the model's position, and had none.
  const root = open({ path: reportsStorePath(kept), maxDbs: 4 });
  const state = root.openDB({ name: 'report-state' });
  assert.equal(state.get(['demo', 'pos', 'reports']), EVENTS, 'the reports thread wrote its position');
  await state.remove(['demo', 'pos', 'reports']);
  await root.close();
  await build(kept, []);
  const expected = await dump(written);
  const got = await dump(kept);
  assert.ok([...expected.keys()].some((k) => k.includes('"repr"')), 'report rollups were written');
  assertSameState(got, expected);
});

test('a builder started on report records kept in the model environment (before the reports environment) finds them moved: the same state as a builder that wrote them there', { timeout: 400_000 }, async (t) => {
  const [written, legacy] = await builtAndCopy(t, 'affinity-report-env-');
  // The former layout: every report record in model-state (msgpack) and model (the snapshot's chunks), no reports folder.
  const reports = open({ path: reportsStorePath(legacy), maxDbs: 4 });
  const state = Array.from(reports.openDB({ name: 'report-state' }).getRange({}), ({ key, value }) => ({ key, value }));
  const blobs = Array.from(reports.openDB<Buffer>({ name: 'report-blobs', encoding: 'binary' }).getRange({}), ({ key, value }) => ({ key, value: Buffer.from(value) }));
  await reports.close();
  rmSync(reportsStorePath(legacy), { recursive: true });
  const model = open({ path: modelStorePath(legacy), maxDbs: 4 });
  const modelState = model.openDB({ name: 'model-state' });
  const modelBytes = model.openDB<Buffer>({ name: 'model', encoding: 'binary' });
  await model.transaction(() => {
    for (const { key, value } of state) if (Array.isArray(key)) modelState.put(key, value);
    for (const { key, value } of blobs) modelBytes.put(key, value);
  });
  await model.close();
  assert.ok(state.some(({ key }) => Array.isArray(key) && key[1] === 'repr') && blobs.length > 0, `${state.length} report records and ${blobs.length} snapshot chunks put back in the model environment`);
  await build(legacy, []);
  const got = await dump(legacy);
  assert.ok(![...got.keys()].some((k) => /^model(-state)? \["demo","(repr|repu|repk|repsnap|click)"/.test(k) || k.startsWith('model-state ["demo","pos","reports"]')), 'no report record is left in the model environment');
  assertSameState(got, await dump(written));
});
