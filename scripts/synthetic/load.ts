// Loads the seeded synthetic data set (scripts/synthetic/dataset.ts) into a running Affinity
// server through its public HTTP API, as an integrator would: a client-credentials token, one
// `PUT /api/{env}/items/{type}/{id}` per item, then `POST /api/{env}/events` in batches of 100
// (no token). Requests run in a pool of `--concurrency` in flight. Any non-2xx answer stops the
// load: the CLI prints its status and body and exits 1. Events carry `event_id`s unless
// `--no-event-ids`, so loading the same seed twice stores its events once.
//
//   tsx scripts/synthetic/load.ts --url http://127.0.0.1:8080 --client-id ID --client-secret SECRET
//       [--items 100000 --users 50000 --events 1000000 --seed 42 --env demo --concurrency 64]
//       [--no-event-ids]   send events without event_id (no deduplication work on the server)
//   (a secret starting with '-' is passed as --client-secret=-abc; parseArgs refuses it otherwise)
//   tsx scripts/synthetic/load.ts --dry-run [sizes]    generate only, and report the generation rate
//
// In-process (benchmarks): `await loadDataset({ url, token, options, concurrency })`, where
// `token` is a string or `tokenSource(url, id, secret)`, which renews the token before expiry.
import http from 'node:http';
import https from 'node:https';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_OPTIONS, generateEventBatches, generateItems, type DatasetOptions } from './dataset.ts';

const EVENTS_PER_REQUEST = 100;
const DEFAULT_CONCURRENCY = 64;
/** Renew this long before `expires_in` runs out, so no request carries a token that lapses in flight. */
const RENEW_MARGIN_SEC = 60;
const PROGRESS_STEPS = 10;

/** A non-2xx answer, with what the server said. */
export class HttpStatusError extends Error {
  constructor(
    readonly method: string,
    readonly url: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(`${method} ${url} answered ${status}: ${body}`);
  }
}

/** Keep-alive agent for the bulk requests, one socket per request in flight. */
function createAgent(url: string, concurrency: number): http.Agent {
  const Agent = url.startsWith('https:') ? https.Agent : http.Agent;
  return new Agent({ keepAlive: true, maxSockets: concurrency });
}

/**
 * Sends one JSON request on `agent`; resolves on 2xx, rejects with HttpStatusError otherwise.
 * node:http rather than fetch: on loopback, Node 20's fetch spends ~3× the client CPU per request
 * (measured: 1.7k vs 5.4k POSTs/s against a bare node:http server, 64 in flight), and the client
 * would cap the rate being measured.
 */
function sendJson(agent: http.Agent, method: string, url: string, body: string, authorization?: string): Promise<void> {
  const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
  if (authorization) headers.authorization = authorization;
  const request = url.startsWith('https:') ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) resolve();
        else reject(new HttpStatusError(method, url, status, Buffer.concat(chunks).toString('utf8')));
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** `POST /api/oauth/token` (client credentials, HTTP Basic); raises HttpStatusError when refused. */
export async function fetchToken(url: string, clientId: string, clientSecret: string): Promise<{ accessToken: string; expiresInSec: number }> {
  const endpoint = `${url}/api/oauth/token`;
  // RFC 6749 §2.3.1: id and secret are form-urlencoded before base64.
  const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64');
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
  if (!res.ok) throw new HttpStatusError('POST', endpoint, res.status, await res.text());
  const body = (await res.json()) as { access_token?: unknown; expires_in?: unknown };
  if (typeof body.access_token !== 'string') throw new Error(`${endpoint} answered without access_token`);
  return { accessToken: body.access_token, expiresInSec: typeof body.expires_in === 'number' ? body.expires_in : 3600 };
}

/** A token getter that fetches once and again shortly before each token expires. */
export function tokenSource(url: string, clientId: string, clientSecret: string): () => Promise<string> {
  let held: { token: string; renewAtMs: number } | undefined;
  let pending: Promise<{ token: string; renewAtMs: number }> | undefined;
  const renew = async () => {
    const { accessToken, expiresInSec } = await fetchToken(url, clientId, clientSecret);
    const marginSec = Math.min(RENEW_MARGIN_SEC, expiresInSec / 2);
    held = { token: accessToken, renewAtMs: Date.now() + (expiresInSec - marginSec) * 1000 };
    return held;
  };
  return async () => {
    if (held && Date.now() < held.renewAtMs) return held.token;
    // Concurrent callers share one pending renewal instead of each asking for a token.
    pending ??= renew().finally(() => (pending = undefined));
    return (await pending).token;
  };
}

/**
 * Runs `task` on every value of `source` with at most `concurrency` in flight. Stops taking new
 * values at the first failure and rejects with it once the in-flight tasks have settled.
 */
async function runPool<T>(source: Iterator<T>, concurrency: number, task: (value: T) => Promise<void>): Promise<void> {
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    // The generator is synchronous and JS single-threaded, so workers can share one iterator.
    for (let next = source.next(); !next.done && !failure; next = source.next()) {
      try {
        await task(next.value);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  if (failure) throw failure.error;
}

export type LoadPhase = 'items' | 'events';

export interface LoadProgress {
  phase: LoadPhase;
  done: number;
  total: number;
  elapsedSec: number;
}

export interface LoadSummary {
  items: number;
  events: number;
  itemsSec: number;
  eventsSec: number;
}

export interface LoadOptions {
  /** Server origin, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** Bearer token for the item PUTs, or a getter (see tokenSource) for loads outlasting one token. */
  token: string | (() => Promise<string>);
  options: DatasetOptions;
  /** Requests in flight per phase; default 64. */
  concurrency?: number;
  /** Called about every 10% of each phase, and at its end. */
  onProgress?: (progress: LoadProgress) => void;
}

/** Counts what a phase has done and reports each tenth of its total. */
function progressCounter(phase: LoadPhase, total: number, onProgress: LoadOptions['onProgress']) {
  const startMs = performance.now();
  let done = 0;
  let nextStep = 1;
  return {
    add(n: number) {
      done += n;
      if (!onProgress || done < (total * nextStep) / PROGRESS_STEPS) return;
      while (done >= (total * nextStep) / PROGRESS_STEPS && nextStep <= PROGRESS_STEPS) nextStep++;
      onProgress({ phase, done, total, elapsedSec: (performance.now() - startMs) / 1000 });
    },
    seconds: () => (performance.now() - startMs) / 1000,
  };
}

/**
 * PUTs every item of the data set, then POSTs its events. Resolves with counts and seconds per
 * phase; rejects with HttpStatusError on the first non-2xx answer (requests in flight finish).
 */
export async function loadDataset({ url, token, options, concurrency = DEFAULT_CONCURRENCY, onProgress }: LoadOptions): Promise<LoadSummary> {
  const getToken = typeof token === 'string' ? async () => token : token;
  const env = encodeURIComponent(options.environment);

  const agent = createAgent(url, concurrency);
  try {
    const items = progressCounter('items', options.items, onProgress);
    await runPool(generateItems(options), concurrency, async (item) => {
      const target = `${url}/api/${env}/items/${encodeURIComponent(item.item_type)}/${encodeURIComponent(item.item_id)}`;
      await sendJson(agent, 'PUT', target, JSON.stringify(item), `Bearer ${await getToken()}`);
      items.add(1);
    });
    const itemsSec = items.seconds();

    const events = progressCounter('events', options.events, onProgress);
    const eventsUrl = `${url}/api/${env}/events`;
    const batches = options.events > 0 ? generateEventBatches(options, EVENTS_PER_REQUEST) : [][Symbol.iterator]();
    await runPool(batches, concurrency, async (batch) => {
      await sendJson(agent, 'POST', eventsUrl, JSON.stringify({ events: batch }));
      events.add(batch.length);
    });
    return { items: options.items, events: options.events, itemsSec, eventsSec: events.seconds() };
  } finally {
    agent.destroy();
  }
}

function rate(count: number, seconds: number): string {
  return seconds > 0 ? `${Math.round(count / seconds)}/s` : '-';
}

function countArg(values: Record<string, unknown>, name: string, fallback: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer, got '${String(raw)}'`);
  return n;
}

/** Generates without sending: how fast the data set itself comes out. */
function dryRun(options: DatasetOptions): void {
  let startMs = performance.now();
  let items = 0;
  for (const _ of generateItems(options)) items++;
  const itemsSec = (performance.now() - startMs) / 1000;
  startMs = performance.now();
  let events = 0;
  for (const batch of generateEventBatches(options, EVENTS_PER_REQUEST)) events += batch.length;
  const eventsSec = (performance.now() - startMs) / 1000;
  console.log(`generated ${items} items in ${itemsSec.toFixed(2)} s (${rate(items, itemsSec)}), ${events} events in ${eventsSec.toFixed(2)} s (${rate(events, eventsSec)})`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string', default: 'http://127.0.0.1:8080' },
      'client-id': { type: 'string' },
      'client-secret': { type: 'string' },
      items: { type: 'string' },
      users: { type: 'string' },
      events: { type: 'string' },
      seed: { type: 'string' },
      env: { type: 'string', default: DEFAULT_OPTIONS.environment },
      concurrency: { type: 'string' },
      'no-event-ids': { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
    },
    strict: true,
  });
  const options: DatasetOptions = {
    ...DEFAULT_OPTIONS,
    itemTypes: [...DEFAULT_OPTIONS.itemTypes],
    environment: values.env,
    items: countArg(values, 'items', DEFAULT_OPTIONS.items),
    users: countArg(values, 'users', DEFAULT_OPTIONS.users),
    events: countArg(values, 'events', DEFAULT_OPTIONS.events),
    seed: countArg(values, 'seed', DEFAULT_OPTIONS.seed),
    eventIds: !values['no-event-ids'],
  };
  if (values['dry-run']) return dryRun(options);
  const clientId = values['client-id'];
  const clientSecret = values['client-secret'];
  if (!clientId || !clientSecret) throw new Error('--client-id and --client-secret are required (or --dry-run)');
  const url = values.url.replace(/\/+$/, '');
  const concurrency = countArg(values, 'concurrency', DEFAULT_CONCURRENCY);
  if (concurrency < 1) throw new Error('--concurrency must be at least 1');

  const token = tokenSource(url, clientId, clientSecret);
  await token(); // fail on bad credentials before generating anything
  console.log(`loading seed ${options.seed}: ${options.items} items, ${options.events} events from ${options.users} users into ${url} (${options.environment}), concurrency ${concurrency}`);
  const summary = await loadDataset({
    url,
    token,
    options,
    concurrency,
    onProgress: (p) => console.log(`  ${p.phase}: ${p.done}/${p.total} (${Math.round((100 * p.done) / p.total)}%) in ${p.elapsedSec.toFixed(1)} s`),
  });
  console.log(
    `done: ${summary.items} items in ${summary.itemsSec.toFixed(1)} s (${rate(summary.items, summary.itemsSec)}), ` +
      `${summary.events} events in ${summary.eventsSec.toFixed(1)} s (${rate(summary.events, summary.eventsSec)})`,
  );
}

// Importing this module (benchmarks) does no work; running it as a script does.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    if (err instanceof HttpStatusError) console.error(`${err.method} ${err.url} -> ${err.status}\n${err.body}`);
    // fetch's "fetch failed" hides the reason (ECONNREFUSED, …) in its cause.
    else if (err instanceof Error) console.error(err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message);
    else console.error(err);
    process.exit(1);
  });
}
