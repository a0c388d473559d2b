// A trained-model build reads its snapshot and the event log after it, not the whole log (issue
// 12), against the real server: the first build reads every event and keeps what it read; the
// next reads only the events since; the training input from snapshot + tail equals the one from
// the whole log, device links across the snapshot included; a snapshot that fails its checksum
// is ignored with a log line and the whole log is read again. What the builds read is taken from
// the server's log lines; the inputs are compared in the test process on the same data directory.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_CONFIG } from '../../src/config/defaults.ts';
import { fingerprintOf, readTrainingData } from '../../src/training/training-data.ts';
import { readTrainingSnapshot } from '../../src/training/training-snapshot.ts';
import { Store } from '../../src/store/open.ts';
import { getToken } from '../helpers/auth.ts';
import { postAndApply, view } from '../helpers/events.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const DEMO = DEFAULT_CONFIG.environments.demo!;
const ENVIRONMENT = { ...DEMO, model: { ...DEMO.model, trained: { ...DEMO.model.trained, rebuildIntervalSec: 0 } } };
const CONFIG = { environments: { demo: ENVIRONMENT } };

interface BuildLine {
  msg: string;
  logReadFrom?: number;
  eventsRead?: number;
  problem?: string;
}

describe('training snapshot', () => {
  let server: TestServer;
  let token: string;
  let sent = 0;

  async function post(events: Array<Record<string, unknown>>): Promise<void> {
    sent += events.length;
    await postAndApply(server.url, 'demo', events, sent);
  }

  /** Rebuilds and returns the log lines the build wrote (its warning, if any, and 'trained model built'). */
  async function rebuild(): Promise<BuildLine[]> {
    const from = server.logs.length;
    const res = await fetch(`${server.url}/api/demo/model/rebuild`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200, await res.text());
    for (let i = 0; i < 100; i++) {
      const lines = server.logs.slice(from).flatMap((line) => {
        try {
          return [JSON.parse(line) as BuildLine];
        } catch {
          return [];
        }
      });
      if (lines.some((l) => l.msg === 'trained model built')) return lines;
      await sleep(20);
    }
    throw new Error('no "trained model built" line');
  }

  /** The training input read in this process with and without the stored snapshot. */
  function inputs(): { whole: ReturnType<typeof readTrainingData>; resumed: ReturnType<typeof readTrainingData> } {
    const store = new Store({ ...DEFAULT_CONFIG.store, dataDir: server.dataDir });
    try {
      return { whole: readTrainingData(store, 'demo', ENVIRONMENT, false), resumed: readTrainingData(store, 'demo', ENVIRONMENT, true) };
    } finally {
      void store.close();
    }
  }

  const sameInput = (a: ReturnType<typeof readTrainingData>, b: ReturnType<typeof readTrainingData>) => {
    assert.deepEqual([...a.items], [...b.items], 'model columns');
    assert.deepEqual([...a.rows.offsets], [...b.rows.offsets], 'user rows');
    assert.deepEqual([...a.rows.cols], [...b.rows.cols], 'interactions');
    assert.deepEqual([...a.rows.values], [...b.rows.values], 'values');
    assert.equal(a.users, b.users);
    assert.equal(a.eventsPosition, b.eventsPosition);
  };

  before(async () => {
    server = await startServer({ config: CONFIG });
    token = await getToken(server);
    for (let i = 0; i < 12; i++) {
      const res = await fetch(`${server.url}/api/demo/items/article/s${i}`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ environment: 'demo', item_id: `s${i}`, item_type: 'article' }),
      });
      assert.equal(res.status, 200, await res.text());
    }
  });
  after(() => server.close());

  test('the first build reads the whole log, the next only what came after; the inputs equal a whole read', async () => {
    const first: Array<Record<string, unknown>> = [];
    for (let u = 0; u < 8; u++) for (const k of [0, 1, 2]) first.push(view(`s${(u + k) % 6}`, `u${u}`));
    // An anonymous device: linked to u9 only after the snapshot, its items must join u9's then.
    first.push(view('s7', null, 'lonely-device'), view('s8', null, 'lonely-device'));
    await post(first);
    const built = (await rebuild()).find((l) => l.msg === 'trained model built')!;
    assert.equal(built.logReadFrom, 0);
    assert.equal(built.eventsRead, first.length);

    const second = [view('s7', 'u9', 'lonely-device'), view('s9', 'u9', 'lonely-device'), view('s8', 'u3'), view('s9', 'u4')];
    await post(second);
    const next = (await rebuild()).find((l) => l.msg === 'trained model built')!;
    assert.equal(next.logReadFrom, first.length, 'read from the position the snapshot covers');
    assert.equal(next.eventsRead, second.length, 'only the events after it');

    // A tail after the last snapshot, read beside it.
    await post([view('s10', 'u9', 'lonely-device'), view('s10', 'u1'), view('s11', 'u2')]);
    const { whole, resumed } = inputs();
    assert.equal(resumed.readFrom, first.length + second.length);
    assert.equal(resumed.eventsRead, 3);
    sameInput(resumed, whole);
  });

  test('a snapshot that fails its checksum is ignored with a log line, and the whole log is read', async () => {
    const store = new Store({ ...DEFAULT_CONFIG.store, dataDir: server.dataDir });
    try {
      const chunk = store.model.getBinary(['demo', 'training', 'chunk', 0]);
      assert.ok(chunk, 'a snapshot is stored');
      const damaged = Buffer.from(chunk);
      damaged[damaged.length - 5]! ^= 0xff;
      await store.model.put(['demo', 'training', 'chunk', 0], damaged);
    } finally {
      await store.close();
    }
    const lines = await rebuild();
    const warning = lines.find((l) => l.msg === 'training snapshot not used; the whole event log was read');
    assert.ok(warning, `a warning among ${JSON.stringify(lines)}`);
    assert.match(warning.problem ?? '', /fails its checksum/);
    const built = lines.find((l) => l.msg === 'trained model built')!;
    assert.equal(built.logReadFrom, 0);
    assert.equal(built.eventsRead, sent);

    const check = new Store({ ...DEFAULT_CONFIG.store, dataDir: server.dataDir });
    try {
      const stored = readTrainingSnapshot(check, 'demo', fingerprintOf(ENVIRONMENT));
      assert.equal(stored.problem, undefined, 'the build wrote a sound snapshot again');
      assert.equal(stored.pass?.position, sent);
    } finally {
      await check.close();
    }
    const { whole, resumed } = inputs();
    sameInput(resumed, whole);
  });
});
