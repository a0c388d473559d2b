// The model builder's rows in shared memory against the real server (store/live-rows.ts): under a
// steady arrival of events, neighbour rows reach recommendations at once while the builder writes to
// LMDB only every `builder.flushMs` (here ten minutes: only a pause of the arrivals writes), and
// a kill -9 between the publish and the write loses nothing (the restart replays the log from the
// written position and the same rows serve again).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_CONFIG } from '../../src/config/defaults.ts';
import { getToken } from '../helpers/auth.ts';
import { sharedDataDir, startServer, type TestServer } from '../helpers/server.ts';

const DEMO = DEFAULT_CONFIG.environments.demo!;
/** No trained model (only the builder's rows move more_like_this); writes only after a pause of the events. */
const CONFIG = {
  builder: { ...DEFAULT_CONFIG.builder, flushMs: 600_000 },
  environments: { demo: { ...DEMO, model: { ...DEMO.model, trained: { ...DEMO.model.trained, enabled: false } } } },
};

interface Health {
  model_builder: { environments: Record<string, { applied_position: number; log_position: number }>; publish_cpu_ms: { count: number; mean: number | null } } | null;
}

const view = (user: string, item: string) => ({ event_type: 'detail_pageview', page_type: 'article_detail', channel: 'www', device_id: `d-${user}`, user_id: user, action_item: item, action_item_type: 'article' });

async function post(server: TestServer, events: unknown[]): Promise<void> {
  const res = await fetch(`${server.url}/api/demo/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ events }) });
  assert.equal(res.status, 200, await res.text());
}

async function health(server: TestServer): Promise<Health> {
  return (await (await fetch(`${server.url}/health`)).json()) as Health;
}

async function moreLikeA(server: TestServer, token: string): Promise<string[]> {
  const body = { page_type: 'article_detail', channel: 'www', device_id: 'd-reader', context_item: 'A', context_item_type: 'article', lists: [{ list_name: 'more_like_this', list_size: 3 }] };
  const res = await fetch(`${server.url}/api/demo/recommendations/requests`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return (JSON.parse(text) as { lists: Array<{ items: Array<{ item_id: string }> }> }).lists[0]!.items.map((i) => i.item_id);
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(20);
  }
}

/** Views of other items by other users every 25 ms until stopped: the arrival never pauses. */
function steadyArrival(server: TestServer): { stop: () => Promise<void> } {
  let running = true;
  const loop = (async () => {
    for (let n = 0; running; n++) {
      await post(server, [view(`filler${n % 50}`, `F${n % 7}`), view(`filler${n % 50}`, `F${(n + 3) % 7}`)]);
      await sleep(25);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

describe('live rows', () => {
  const shared = sharedDataDir();
  after(() => shared.close());

  test('under a steady arrival, more_like_this moves before the builder writes; a pause writes it; a kill -9 then restart serves the same', async () => {
    const server = shared.track(await startServer({ dataDir: shared.dataDir, config: CONFIG }));
    const token = await getToken(server);
    const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
    for (const id of ['A', 'B', 'C', 'F0', 'F1', 'F2', 'F3', 'F4', 'F5', 'F6']) {
      const res = await fetch(`${server.url}/api/demo/items/article/${id}`, { method: 'PUT', headers, body: JSON.stringify({ environment: 'demo', item_id: id, item_type: 'article', title: `Article ${id}` }) });
      assert.equal(res.status, 200, await res.text());
    }
    // C with A first, written (the arrival then pauses).
    await post(server, [view('u1', 'A'), view('u1', 'C'), view('u2', 'A'), view('u3', 'A')]);
    await until('C first in more_like_this for A', async () => ((await moreLikeA(server, token))[0] === 'C' ? true : undefined));
    const settled = await until('the first events written', async () => {
      const demo = (await health(server)).model_builder?.environments.demo;
      return demo && demo.applied_position === demo.log_position && demo.log_position >= 4 ? demo.applied_position : undefined;
    });

    const arrival = steadyArrival(server);
    try {
      // u2 and u3 view B after A: B outweighs C, in the rows the builder holds.
      await post(server, [view('u2', 'B'), view('u3', 'B')]);
      await until('B first in more_like_this for A', async () => ((await moreLikeA(server, token))[0] === 'B' ? true : undefined));
      // Not written: the events keep arriving and the write pace is ten minutes.
      const h = await health(server);
      assert.equal(h.model_builder!.environments.demo!.applied_position, settled, JSON.stringify(h.model_builder));
      assert.ok(h.model_builder!.environments.demo!.log_position > settled + 2);
      // The publishes reach /health within its stats interval (a quarter second).
      const publishes = await until('publishes in /health', async () => {
        const p = (await health(server)).model_builder!.publish_cpu_ms;
        return p.count >= 1 ? p : undefined;
      }, 3000);
      assert.ok(publishes.mean! >= 0, JSON.stringify(publishes));
    } finally {
      await arrival.stop();
    }
    // Once the events pause, everything applied is written.
    const written = await until('the events written after the pause', async () => {
      const demo = (await health(server)).model_builder?.environments.demo;
      return demo && demo.applied_position === demo.log_position ? demo.log_position : undefined;
    });
    assert.equal((await moreLikeA(server, token))[0], 'B');

    // Published and not written again, then killed: nothing of it is lost.
    const second = steadyArrival(server);
    let end: number;
    try {
      await post(server, [view('u4', 'A'), view('u4', 'C'), view('u5', 'A'), view('u5', 'C'), view('u6', 'A'), view('u6', 'C')]);
      await until('C first again', async () => ((await moreLikeA(server, token))[0] === 'C' ? true : undefined));
      const h = await health(server);
      assert.equal(h.model_builder!.environments.demo!.applied_position, written, 'still not written when killed');
      end = h.model_builder!.environments.demo!.log_position;
    } finally {
      server.proc.kill('SIGKILL');
      await second.stop().catch(() => undefined);
    }
    await server.exited;
    const restarted = shared.track(await startServer({ dataDir: shared.dataDir, config: CONFIG }));
    const token2 = await getToken(restarted, server.demoClient);
    const demo = await until('the restart caught up', async () => {
      const d = (await health(restarted)).model_builder?.environments.demo;
      return d && d.applied_position === d.log_position && d.log_position >= end ? d : undefined;
    });
    assert.ok(demo.log_position >= end, 'every acknowledged event is in the log');
    assert.equal((await moreLikeA(restarted, token2))[0], 'C', 'the rows replayed from the log');
  });
});
