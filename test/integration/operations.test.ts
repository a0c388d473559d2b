// Operating the service: Prometheus metrics at /metrics, readiness at /ready, request ids in
// headers, problem bodies and sampled access logs, CORS per environment (preflights and
// answers), gzip and deflate request bodies (the size limit on the decoded size; corrupt or
// oversized ones refused with nothing stored), and gzip responses when asked for.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deflateSync, gzipSync } from 'node:zlib';
import type { MsSummaryWire } from '../../src/http/routes/health.ts';
import { getToken } from '../helpers/auth.ts';
import { waitFor } from '../helpers/api.ts';
import { assertProblem } from '../helpers/problem.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { snapshotStore, assertSameStore } from '../helpers/store-snapshot.ts';

const SHOP = 'https://shop.example';

function pageVisit(id: string) {
  return { event_type: 'page_visit', event_id: id, page_type: 'home', device_id: `dev-${id}`, user_id: `user-${id}`, channel: 'www-desktop' };
}

function postEvents(server: TestServer, body: string | Uint8Array, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}/api/demo/events`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });
}

async function recentEventIds(server: TestServer, token: string): Promise<string[]> {
  const res = await fetch(`${server.url}/api/demo/events?limit=1000`, { headers: { Authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200);
  return ((await res.json()) as { events: Array<{ event_id?: string }> }).events.map((e) => e.event_id ?? '');
}

/** The value of one sample line (`name{labels} value`) in Prometheus text, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const found = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe('a server with CORS for one origin and a sampled access log', () => {
  let server: TestServer;
  let token: string;
  before(async () => {
    server = await startServer({
      env: { AFFINITY_ACCESS_LOG_SAMPLE_RATE: '1' },
      config: {
        environments: {
          demo: {
            itemTypes: ['article'],
            lists: { popular: { strategy: 'popular', itemTypes: [] } },
            cors: { allowedOrigins: [SHOP] },
          },
        },
      },
    });
    token = await getToken(server);
  });
  after(() => server.close());

  test('GET /ready answers 200 once the builder has loaded every environment', async () => {
    const body = await waitFor('ready', async () => {
      const res = await fetch(`${server.url}/ready`);
      return res.status === 200 ? ((await res.json()) as { status: string }) : undefined;
    });
    assert.deepEqual(body, { status: 'ready' });
  });

  test('GET /metrics is Prometheus text with request, event, builder, pool, model, LMDB and runtime metrics', async () => {
    assert.equal((await postEvents(server, JSON.stringify({ events: [pageVisit('m-1'), pageVisit('m-2')] }))).status, 200);
    assert.equal((await postEvents(server, JSON.stringify({ events: [{ event_type: 'purchase' }] }))).status, 400);
    // The builder's lag histogram arrives with its next stats report after it applied the events
    // (published: readable from its memory); its offset and applied count once its write is readable.
    const text = await waitFor('builder lag samples and its written offset', async () => {
      const t = await (await fetch(`${server.url}/metrics`)).text();
      const written = (sample(t, 'affinity_builder_offset', { environment: 'demo' }) ?? 0) >= 1 && (sample(t, 'affinity_builder_applied_events') ?? 0) >= 2;
      return (sample(t, 'affinity_builder_lag_seconds_count') ?? 0) >= 2 && written ? t : undefined;
    });
    const res = await fetch(`${server.url}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    assert.equal(sample(text, 'affinity_events_total', { environment: 'demo', event_type: 'page_visit', outcome: 'accepted' }), 2);
    assert.equal(sample(text, 'affinity_events_total', { environment: 'demo', event_type: 'purchase', outcome: 'rejected' }), 1);
    assert.ok((sample(text, 'affinity_http_requests_total', { route: '/api/:environment/events', method: 'POST', status: '200' }) ?? 0) >= 1);
    assert.ok((sample(text, 'affinity_http_request_duration_seconds_count', { route: '/api/:environment/events', method: 'POST', status: '400' }) ?? 0) >= 1);
    assert.ok((sample(text, 'affinity_builder_offset', { environment: 'demo' }) ?? 0) >= 1);
    assert.ok((sample(text, 'affinity_builder_applied_events') ?? 0) >= 2);
    // Issue 12: per environment, how far the log is ahead of the builder and how old its newest event is.
    assert.equal(sample(text, 'affinity_builder_lag_events', { environment: 'demo' }), 0);
    const age = sample(text, 'affinity_builder_newest_event_age_seconds', { environment: 'demo' });
    assert.ok(age !== undefined && age >= 0 && age < 60, `newest event age ${age}`);
    assert.equal(sample(text, 'affinity_rank_queue_depth'), 0);
    assert.equal(sample(text, 'affinity_model_version', { environment: 'demo' }), 0, 'no trained model yet');
    assert.ok((sample(text, 'affinity_lmdb_file_bytes') ?? 0) > 0);
    for (const name of ['nodejs_eventloop_lag_p99_seconds', 'process_resident_memory_bytes']) {
      assert.notEqual(sample(text, name), undefined, `${name} is exported`);
    }
    // Samples appear with the first collection of each GC kind; the metric is declared from the start.
    assert.match(text, /^# TYPE nodejs_gc_duration_seconds histogram$/m);
  });

  test("/metrics and /health show how long each periodic commit holds its thread: the builder's flushes and the request counter's", async () => {
    assert.equal((await postEvents(server, JSON.stringify({ events: [pageVisit('c-1')] }))).status, 200);
    const asked = await fetch(`${server.url}/api/demo/recommendations/requests`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ page_type: 'home', channel: 'www', device_id: 'd-cost', lists: [{ list_name: 'popular', list_size: 3 }] }),
    });
    assert.equal(asked.status, 200, await asked.text());
    // The counter commits once a second; the builder's histogram comes with its next stats report.
    const text = await waitFor('both commit histograms', async () => {
      const t = await (await fetch(`${server.url}/metrics`)).text();
      const counted = (name: string) => (sample(t, `${name}_count`) ?? 0) >= 1;
      return counted('affinity_builder_flush_seconds') && counted('affinity_request_counter_flush_seconds') ? t : undefined;
    });
    for (const name of ['affinity_builder_flush_seconds', 'affinity_request_counter_flush_seconds']) {
      const sum = sample(text, `${name}_sum`) ?? 0;
      assert.ok(sum > 0 && sum < 60, `${name}_sum ${sum}`);
      assert.equal(sample(text, `${name}_bucket`, { le: '+Inf' }), sample(text, `${name}_count`));
    }
    type Cpu = { count: number; mean: number | null };
    // The report counters' thread writes the event at its own pace (every second).
    const health = await waitFor('the report counters\' first commit', async () => {
      const h = (await (await fetch(`${server.url}/health`)).json()) as {
        model_builder: { flush_ms: MsSummaryWire; flush_cpu_ms: Cpu; reports_flush_ms: MsSummaryWire | null; reports_flush_cpu_ms: Cpu | null;
          reports_snapshots: { count: number; last_ms: number | null; last_cpu_ms: number | null; mean_cpu_ms: number | null } | null };
        request_counter: { flush_ms: MsSummaryWire };
      };
      return (h.model_builder.reports_flush_ms?.count ?? 0) >= 1 ? h : undefined;
    });
    for (const [what, cost] of [['builder', health.model_builder.flush_ms], ['request counter', health.request_counter.flush_ms]] as const) {
      assert.ok(cost.count >= 1, `${what}: ${JSON.stringify(cost)}`);
      assert.ok(cost.max > 0 && cost.p50 <= cost.p99 && cost.p99 <= cost.max, `${what}: ${JSON.stringify(cost)}`);
    }
    // The builder's flushes by their CPU time too: counted with them, a mean no larger than their longest hold.
    const cpu = health.model_builder.flush_cpu_ms;
    assert.equal(cpu.count, health.model_builder.flush_ms.count, JSON.stringify(health.model_builder));
    assert.ok(cpu.mean !== null && cpu.mean >= 0 && cpu.mean <= health.model_builder.flush_ms.max + 5, JSON.stringify(cpu));
    // And the report counters' commits, in their own thread, the same way.
    const reports = health.model_builder.reports_flush_ms!;
    const reportsCpu = health.model_builder.reports_flush_cpu_ms!;
    assert.ok(reports.max >= 0 && reports.p50 <= reports.p99 && reports.p99 <= reports.max, JSON.stringify(reports));
    assert.equal(reportsCpu.count, reports.count, JSON.stringify(health.model_builder));
    assert.ok(reportsCpu.mean !== null && reportsCpu.mean >= 0 && reportsCpu.mean <= reports.max + 5, JSON.stringify(reportsCpu));
    // A fresh store's first commit of the report counters is followed by their clicks and units' first snapshot.
    const snapshots = health.model_builder.reports_snapshots!;
    assert.ok(snapshots.count >= 1 && snapshots.last_ms! >= 0 && snapshots.last_cpu_ms! >= 0 && snapshots.mean_cpu_ms! >= 0, JSON.stringify(snapshots));
  });

  test("/health counts the report counters' flushes that write only request counters (recommendations served, no event)", async () => {
    // The request counters are written by the report counters' thread, into the reports environment (store/open.ts).
    const builderFlushes = async () => ((await (await fetch(`${server.url}/health`)).json()) as { model_builder: { reports_flush_ms: MsSummaryWire | null } | null }).model_builder?.reports_flush_ms?.count ?? 0;
    // Settled: no event or catalog change pending, so the next flushes are the counters'.
    let before = await builderFlushes();
    await waitFor('the builder idle', async () => {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const now = await builderFlushes();
      const settled = now === before;
      before = now;
      return settled ? true : undefined;
    });
    const asked = await fetch(`${server.url}/api/demo/recommendations/requests`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ page_type: 'home', channel: 'www', device_id: 'd-counters-only', lists: [{ list_name: 'popular', list_size: 3 }] }),
    });
    assert.equal(asked.status, 200, await asked.text());
    await waitFor('a flush of the request counters in /health', async () => ((await builderFlushes()) > before ? true : undefined));
  });

  test('a request id sent in X-Request-Id is echoed; one is generated otherwise; problems carry it', async () => {
    const given = await fetch(`${server.url}/health`, { headers: { 'X-Request-Id': 'trace-42' } });
    assert.equal(given.headers.get('x-request-id'), 'trace-42');
    const generated = await fetch(`${server.url}/health`);
    assert.match(generated.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const unsafe = await fetch(`${server.url}/health`, { headers: { 'X-Request-Id': 'has spaces and "quotes"' } });
    assert.match(unsafe.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/, 'an unsafe id is replaced');
    const problem = await assertProblem(await postEvents(server, '{', { 'X-Request-Id': 'bad-body-1' }), 415, 'body-not-json');
    assert.equal(problem.request_id, 'bad-body-1');
  });

  test('with access log sampling at 1 every request is one JSON line with its request id, status and time', async () => {
    await fetch(`${server.url}/health`, { headers: { 'X-Request-Id': 'logged-1' } });
    const line = await waitFor('the access line', async () => server.logs.find((l) => l.includes('"requestId":"logged-1"')));
    const entry = JSON.parse(line) as Record<string, unknown>;
    assert.equal(entry.msg, 'request');
    assert.equal(entry.status, 200);
    assert.equal(entry.method, 'GET');
    assert.equal(entry.url, '/health');
    assert.equal(typeof entry.ms, 'number');
  });

  test('a preflight from an allowed origin is answered with the methods and headers asked for', async () => {
    const res = await fetch(`${server.url}/api/demo/events`, {
      method: 'OPTIONS',
      headers: { Origin: SHOP, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type, content-encoding' },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), SHOP);
    assert.match(res.headers.get('access-control-allow-methods') ?? '', /POST/);
    assert.equal(res.headers.get('access-control-allow-headers'), 'content-type, content-encoding');
    const rec = await fetch(`${server.url}/api/demo/recommendations/requests`, { method: 'OPTIONS', headers: { Origin: SHOP, 'Access-Control-Request-Method': 'POST' } });
    assert.equal(rec.headers.get('access-control-allow-origin'), SHOP);
  });

  test('a preflight from an origin not allowed gets no CORS headers', async () => {
    const res = await fetch(`${server.url}/api/demo/events`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' },
    });
    assert.equal(res.status, 204);
    for (const [name] of res.headers) assert.ok(!name.startsWith('access-control-'), `no ${name} header`);
  });

  test('a preflight naming a badly percent-encoded environment gets no CORS headers and the server keeps serving', async () => {
    const res = await fetch(`${server.url}/api/%E0%A4%A/events`, { method: 'OPTIONS', headers: { Origin: SHOP, 'Access-Control-Request-Method': 'POST' } });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
  });

  test('events posted from an allowed origin are answered with its CORS headers; others get none', async () => {
    const allowed = await postEvents(server, JSON.stringify({ events: [pageVisit('cors-1')] }), { Origin: SHOP });
    assert.equal(allowed.status, 200);
    assert.equal(allowed.headers.get('access-control-allow-origin'), SHOP);
    assert.match(allowed.headers.get('access-control-expose-headers') ?? '', /X-Request-Id/);
    const other = await postEvents(server, JSON.stringify({ events: [pageVisit('cors-2')] }), { Origin: 'https://evil.example' });
    assert.equal(other.status, 200);
    assert.equal(other.headers.get('access-control-allow-origin'), null);
  });

  test('gzip and deflate event bodies are decoded and stored', async () => {
    const gz = await postEvents(server, gzipSync(JSON.stringify({ events: [pageVisit('gz-1')] })), { 'Content-Encoding': 'gzip' });
    assert.equal(gz.status, 200, await gz.text());
    const df = await postEvents(server, deflateSync(JSON.stringify({ events: [pageVisit('df-1')] })), { 'Content-Encoding': 'deflate' });
    assert.equal(df.status, 200, await df.text());
    const ids = await recentEventIds(server, token);
    assert.ok(ids.includes('gz-1') && ids.includes('df-1'), JSON.stringify(ids.slice(0, 5)));
  });

  test('a corrupt gzip body answers 400 and stores nothing', async () => {
    const before = await snapshotStore(server.dataDir);
    const good = gzipSync(JSON.stringify({ events: [pageVisit('corrupt-1')] }));
    const corrupt = Buffer.from(good);
    corrupt.fill(0x55, 12, 24);
    const problem = await assertProblem(await postEvents(server, corrupt, { 'Content-Encoding': 'gzip' }), 400, 'invalid-request');
    assert.match(problem.detail, /not valid gzip/);
    assertSameStore(await snapshotStore(server.dataDir), before, 'the store is unchanged');
  });

  test('a gzip body expanding past the size limit answers 413 and stores nothing', async () => {
    const before = await snapshotStore(server.dataDir);
    // 2 MiB of JSON (the limit is 1 MiB) compresses to a few KiB.
    const huge = JSON.stringify({ events: [{ ...pageVisit('bomb-1'), user_id: 'u'.repeat(2 * 1024 * 1024) }] });
    const bomb = gzipSync(huge);
    assert.ok(bomb.length < 64 * 1024);
    const problem = await assertProblem(await postEvents(server, bomb, { 'Content-Encoding': 'gzip' }), 413, 'body-too-large');
    assert.match(problem.detail, /1048576 bytes/);
    assertSameStore(await snapshotStore(server.dataDir), before, 'the store is unchanged');
  });

  test('a large answer is gzipped for a client that accepts gzip; a small one is not', async () => {
    const events = Array.from({ length: 200 }, (_, i) => pageVisit(`big-${i}`));
    assert.equal((await postEvents(server, JSON.stringify({ events }))).status, 200);
    const big = await fetch(`${server.url}/api/demo/events?limit=200`, { headers: { Authorization: `Bearer ${token}`, 'Accept-Encoding': 'gzip' } });
    assert.equal(big.status, 200);
    assert.equal(big.headers.get('content-encoding'), 'gzip');
    assert.equal(((await big.json()) as { events: unknown[] }).events.length, 200, 'the body decodes to the same JSON');
    const small = await fetch(`${server.url}/ready`, { headers: { 'Accept-Encoding': 'gzip' } });
    assert.equal(small.headers.get('content-encoding'), null);
    const notAsked = await fetch(`${server.url}/api/demo/events?limit=200`, { headers: { Authorization: `Bearer ${token}`, 'Accept-Encoding': 'identity' } });
    assert.equal(notAsked.headers.get('content-encoding'), null);
  });
});

test('by default no access line is written per request', async (t) => {
  const server = await startServer();
  t.after(() => server.close());
  await fetch(`${server.url}/health`, { headers: { 'X-Request-Id': 'quiet-1' } });
  await fetch(`${server.url}/metrics`);
  assert.ok(!server.logs.some((l) => l.includes('quiet-1')), 'no line names the request');
});
