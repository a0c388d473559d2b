// Property-based fuzzing of every route of a running server (fast-check). Each case starts from
// a valid request built from the schemas that validate requests (ITEM_SCHEMA, REQUEST_SCHEMA,
// FEED_BODY, EVENT_TYPES) and mutates it: a field of the wrong type, a required field missing,
// an extra field, huge and odd strings (NUL, lone surrogates, control characters), deep
// nesting, bad UTF-8, duplicate keys, truncated JSON, random bytes, and wrong or absent content
// types and codings; path parameters and query strings are fuzzed too. The property: the server
// answers every case below 500, within CASE_TIMEOUT_MS, without a stack trace in the body.
// Shared by test/integration/fuzz.test.ts (a few thousand cases) and bench/fuzz.bench.ts (long).
import http from 'node:http';
import fc from 'fast-check';
import { EVENT_TYPES } from '../../src/domain/event.ts';
import { FEED_BODY } from '../../src/http/schemas/feed.ts';
import { ITEM_SCHEMA } from '../../src/domain/item-schema.ts';
import { REQUEST_SCHEMA } from '../../src/http/schemas/recommendation.ts';

/** No answer by then is a hang. */
export const CASE_TIMEOUT_MS = 15_000;
/** What a stack trace or an internal path looks like in a body. */
const STACK = /\bat [^\n]*\(?(file:\/\/|\/)[^\n]*:\d+:\d+\)?|node_modules|\/src\/[a-z-/]+\.ts|TypeError|RangeError|ReferenceError/;

export interface FuzzTarget {
  url: string;
  token: string;
  environment: string;
}

export interface FuzzCounts {
  cases: number;
  byStatus: Record<string, number>;
  status4xx: number;
  status5xx: number;
}

interface JsonSchema {
  properties?: Record<string, JsonSchema>;
  required?: readonly string[];
  items?: JsonSchema;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface Route {
  method: string;
  /** Path with `{id}` where a fuzzed or fuzz-owned id goes. */
  path: string;
  /** Valid body (JSON), or a raw body for uploads and the token form. */
  body?: () => Json;
  raw?: () => string;
  contentType?: string;
  schema?: JsonSchema;
  auth: boolean;
  query?: string;
}

const PAGE = 'home';
/** Ids this run owns: fuzz cases never address the seeded records by name. */
const fid = (n: number) => `fz-${n}`;

function validEvent(type: string, n: number): Json {
  const spec = EVENT_TYPES[type]!;
  const out: Record<string, Json> = { event_type: type };
  for (const [field, kind] of Object.entries(spec.required)) {
    out[field] =
      field === 'page_type' ? PAGE
      : field === 'channel' ? 'www'
      : field === 'list_name' ? 'popular'
      : field === 'user_group' ? 'affinity'
      : kind === 'integer' ? 1
      : kind === 'number' ? 9.5
      : kind === 'basket' ? [{ id: fid(n) }]
      : kind === 'user' ? `u${n}`
      : field === 'action_item_type' ? 'article'
      : fid(n);
  }
  return out;
}

function routes(environment: string): Route[] {
  const env = environment;
  const item = (n: number): Json => ({ environment: env, item_id: fid(n), item_type: 'article', title: 'T', categories: ['a'], tags: ['t'], publication_datetime: '2024-01-01T00:00:00Z' });
  const eventTypes = Object.keys(EVENT_TYPES);
  return [
    { method: 'GET', path: '/health', auth: false },
    { method: 'GET', path: '/.well-known/jwks.json', auth: false },
    { method: 'POST', path: '/api/oauth/token', auth: false, raw: () => 'grant_type=client_credentials&client_id=ac_x&client_secret=y', contentType: 'application/x-www-form-urlencoded' },
    { method: 'POST', path: '/api/oauth/token', auth: false, body: () => ({ grant_type: 'client_credentials', client_id: 'ac_x', client_secret: 'y' }) },
    { method: 'PUT', path: `/api/${env}/items/article/{id}`, auth: true, body: () => item(1), schema: ITEM_SCHEMA as unknown as JsonSchema },
    { method: 'POST', path: `/api/${env}/items/article`, auth: true, body: () => item(2), schema: ITEM_SCHEMA as unknown as JsonSchema },
    { method: 'GET', path: `/api/${env}/items/article/{id}`, auth: true },
    { method: 'DELETE', path: `/api/${env}/items/article/{id}`, auth: true },
    { method: 'POST', path: `/api/${env}/items/article/{id}/enable`, auth: true },
    { method: 'POST', path: `/api/${env}/items/article/{id}/disable`, auth: true },
    { method: 'GET', path: `/api/${env}/items/article`, auth: true, query: 'limit=5' },
    { method: 'POST', path: `/api/${env}/events`, auth: false, body: () => ({ events: eventTypes.slice(0, 6).map((t, i) => validEvent(t, i)) }), schema: { properties: { events: {} }, required: ['events'] } },
    { method: 'GET', path: `/api/${env}/events`, auth: true, query: 'limit=3' },
    {
      method: 'POST',
      path: `/api/${env}/recommendations/requests`,
      auth: true,
      body: (): Json => ({ page_type: PAGE, channel: 'www', device_id: 'd1', user_id: 'u1', lists: [{ list_name: 'popular', list_size: 5 }, { list_name: 'recommended_for_you', list_size: 5, limit: 2 }] }),
      schema: REQUEST_SCHEMA as unknown as JsonSchema,
    },
    { method: 'GET', path: `/api/${env}/recommendations/lists`, auth: true, query: 'list_key=abc&offset=1&limit=2' },
    { method: 'GET', path: `/api/${env}/reports`, auth: true, query: 'from=2024-01-01&to=2024-01-07' },
    { method: 'POST', path: `/api/${env}/model/rebuild`, auth: true },
    { method: 'GET', path: `/api/${env}/feeds`, auth: true },
    // .invalid never resolves (RFC 6761): a registered fuzz feed fails its poll without traffic.
    { method: 'POST', path: `/api/${env}/feeds`, auth: true, body: () => ({ url: 'https://feeds.invalid/f.rss', format: 'rss', item_type: 'article', interval: '1d' }), schema: FEED_BODY as unknown as JsonSchema },
    { method: 'PUT', path: `/api/${env}/feeds/{id}`, auth: true, body: () => ({ url: 'https://feeds.invalid/f.json', format: 'json', item_type: 'article', mapping: { id: 'item_id' }, interval: '1d' }), schema: FEED_BODY as unknown as JsonSchema },
    { method: 'GET', path: `/api/${env}/feeds/{id}`, auth: true },
    { method: 'DELETE', path: `/api/${env}/feeds/{id}`, auth: true },
    { method: 'POST', path: `/api/${env}/feeds/{id}/poll`, auth: true },
    { method: 'POST', path: `/api/${env}/imports`, auth: true, raw: () => 'operation,item_id,item_type,title\nADD,fz-9,article,T\n', contentType: 'text/csv' },
    { method: 'POST', path: `/api/${env}/imports`, auth: true, body: () => [{ operation: 'ADD', item_id: 'fz-8', item_type: 'article' }] },
    { method: 'GET', path: `/api/${env}/imports`, auth: true },
    { method: 'GET', path: `/api/${env}/imports/{id}`, auth: true },
  ];
}

/** Odd strings: control characters, NUL, lone surrogates, long runs, RTL marks, JSON-looking text. */
const oddString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme-composite', maxLength: 40 }),
  fc.constantFrom('', '\u0000', 'a\u0000b', '\ud800', '\udfff\ud800', '\u202e', '../../etc/passwd', '%00', '{"a":', '__proto__', 'constructor', '1e309', '-0', '🙂'.repeat(100)),
  fc.integer({ min: 1_000, max: 300_000 }).map((n) => 'x'.repeat(n)),
);
const wrongValue: fc.Arbitrary<Json> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>,
  oddString,
  fc.constantFrom<Json>(null, true, 0, -1, 1e308, 2 ** 53 + 1, [], {}, [[[]]], { '': null }),
  fc.integer({ min: 10, max: 200 }).map((depth) => JSON.parse('['.repeat(depth) + ']'.repeat(depth)) as Json),
);

type Mutation =
  | { kind: 'valid' }
  | { kind: 'wrongType'; pick: number; value: Json }
  | { kind: 'missing'; pick: number }
  | { kind: 'extra'; key: string; value: Json }
  | { kind: 'nested'; pick: number; value: Json }
  | { kind: 'notObject'; value: Json };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.constant<Mutation>({ kind: 'valid' }),
  fc.record({ kind: fc.constant('wrongType' as const), pick: fc.nat(), value: wrongValue }),
  fc.record({ kind: fc.constant('missing' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('extra' as const), key: fc.oneof(oddString, fc.constantFrom('__proto__', 'constructor', 'prototype')), value: wrongValue }),
  fc.record({ kind: fc.constant('nested' as const), pick: fc.nat(), value: wrongValue }),
  fc.record({ kind: fc.constant('notObject' as const), value: wrongValue }),
);

type ByteMutation =
  | { kind: 'none' }
  | { kind: 'truncate'; at: number }
  | { kind: 'insert'; at: number; bytes: readonly number[] }
  | { kind: 'deepNest'; depth: number; bracket: '[' | '{"a":' }
  | { kind: 'duplicateKey'; at: number }
  | { kind: 'random'; bytes: Uint8Array }
  | { kind: 'empty' };

const byteMutation: fc.Arbitrary<ByteMutation> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<ByteMutation>({ kind: 'none' }) },
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  // Bad UTF-8 (lone continuation, overlong, invalid lead bytes), NUL, and raw controls.
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.constantFrom([0xc3, 0x28], [0xff], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0x00], [0x0b, 0x1b], [0xf4, 0x90, 0x80, 0x80]) }),
  fc.record({ kind: fc.constant('duplicateKey' as const), at: fc.nat() }),
  // Deep nesting is built as text: a JS value that deep would overflow this process's stack first.
  fc.record({ kind: fc.constant('deepNest' as const), depth: fc.integer({ min: 1_000, max: 200_000 }), bracket: fc.constantFrom<'[' | '{"a":'>('[', '{"a":') }),
  fc.record({ kind: fc.constant('random' as const), bytes: fc.uint8Array({ maxLength: 300 }) }),
  fc.constant<ByteMutation>({ kind: 'empty' }),
);

/** The object paths of a value, so a mutation can pick one: top level first, one level of nesting. */
function objectPaths(value: Json): Array<[Record<string, Json>, string]> {
  const out: Array<[Record<string, Json>, string]> = [];
  const visit = (v: Json, depth: number) => {
    if (depth > 3 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const e of v.slice(0, 3)) visit(e, depth + 1);
      return;
    }
    for (const key of Object.keys(v)) {
      out.push([v, key]);
      visit(v[key]!, depth + 1);
    }
  };
  visit(value, 0);
  return out;
}

function mutate(value: Json, m: Mutation, schema: JsonSchema | undefined): Json {
  const top = value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  // Fields named by the schema first, so mutations hit what validation reads.
  const schemaKeys = Object.keys(schema?.properties ?? {});
  switch (m.kind) {
    case 'valid':
      return value;
    case 'notObject':
      return m.value;
    case 'wrongType': {
      if (!top || schemaKeys.length === 0) return m.value;
      top[schemaKeys[m.pick % schemaKeys.length]!] = m.value;
      return value;
    }
    case 'missing': {
      const keys = schema?.required?.length ? [...schema.required] : top ? Object.keys(top) : [];
      if (top && keys.length > 0) delete top[keys[m.pick % keys.length]!];
      return value;
    }
    case 'extra':
      if (top) top[m.key] = m.value;
      return value;
    case 'nested': {
      const paths = objectPaths(value);
      if (paths.length === 0) return m.value;
      const [holder, key] = paths[m.pick % paths.length]!;
      holder[key] = m.value;
      return value;
    }
  }
}

function mutateBytes(bytes: Buffer, m: ByteMutation): Buffer {
  switch (m.kind) {
    case 'none':
      return bytes;
    case 'empty':
      return Buffer.alloc(0);
    case 'truncate':
      return bytes.subarray(0, bytes.length === 0 ? 0 : m.at % bytes.length);
    case 'insert': {
      const at = bytes.length === 0 ? 0 : m.at % bytes.length;
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(m.bytes), bytes.subarray(at)]);
    }
    case 'duplicateKey': {
      // Repeat the first `"key":value` pair after the opening brace: {"a":1,"a":1,...}.
      const text = bytes.toString('utf8');
      const match = /^\{("(?:[^"\\]|\\.)*":(?:"(?:[^"\\]|\\.)*"|[^,{}[\]]*))/.exec(text);
      return match ? Buffer.from(`{${match[1]},${text.slice(1)}`) : bytes;
    }
    case 'random':
      return Buffer.from(m.bytes);
    case 'deepNest':
      return Buffer.from(m.bracket.repeat(m.depth) + bytes.toString('utf8') + (m.bracket === '[' ? ']' : '}').repeat(m.depth));
  }
}

const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant<string | undefined>('default') },
  fc.constantFrom<string | undefined>(undefined, 'text/plain', 'application/json; charset=latin1', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json;;;', '\u00ff/\u00ff', 'application/problem+json'),
);
const contentEncoding = fc.oneof({ weight: 12, arbitrary: fc.constant<string | undefined>(undefined) }, fc.constantFrom<string | undefined>('identity', 'gzip', 'x-unknown', 'deflate, br'));
const pathId = fc.oneof(
  { weight: 3, arbitrary: fc.nat({ max: 50 }).map((n) => fid(n)) },
  fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }).map((s) => `fz-${encodeURIComponent(s)}`),
  fc.constantFrom('fz-%', 'fz-%zz', 'fz-%00', 'fz-..%2F..', `fz-${'a'.repeat(300)}`, 'fz-%C3%28', 'fz-%ED%A0%80'),
);
const query = fc.oneof(
  { weight: 3, arbitrary: fc.constant<string | undefined>(undefined) },
  fc.string({ unit: 'binary', maxLength: 40 }).map((s) => encodeURIComponent(s)),
  fc.constantFrom('limit=0', 'limit=-1', 'limit=1e9', 'limit=0x10', 'limit=abc', 'limit=', 'cursor=%%%', 'cursor=Zm9v', 'offset=2147483648&limit=1&list_key=x', 'to=x', 'from=2024-13-40', 'to=2147483648', 'rejected_after=-1', 'a=1&a=2', '%ff=%fe', 'limit=1&limit=2'),
);
const authHeader = fc.oneof(
  { weight: 8, arbitrary: fc.constant<string | undefined>('valid') },
  fc.constantFrom<string | undefined>(undefined, '', 'Bearer', 'Bearer x.y.z', 'Basic Og==', 'Bearer ' + 'a'.repeat(5000), 'bearer  \u00ff'),
);

export const fuzzCase = (routeCount: number) =>
  fc.record({
    route: fc.nat({ max: routeCount - 1 }),
    mutation,
    byteMutation,
    contentType,
    contentEncoding,
    pathId,
    query,
    authHeader,
  });

/**
 * One raw HTTP request; resolves with status and body, rejects on a socket error or after the
 * timeout. A request written to a kept-alive socket that the server had closed after its last
 * answer fails with ECONNRESET or EPIPE before the server saw it: that one is sent again, once,
 * on a new socket (Node's documented pattern for `req.reusedSocket`); CI met it once in 3,000
 * cases. A fresh socket failing, or a second failure, still fails the case.
 */
function send(target: FuzzTarget, agent: http.Agent, method: string, path: string, headers: http.OutgoingHttpHeaders, body: Buffer | undefined, retried = false): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${target.url}${path}`, { method, agent, headers, timeout: CASE_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${CASE_TIMEOUT_MS} ms (hang)`)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      const staleSocket = req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE');
      if (staleSocket && !retried) send(target, agent, method, path, headers, body, true).then(resolve, reject);
      else reject(err);
    });
    req.end(body);
  });
}

/**
 * Runs `runs` cases against `target` and returns the counts; throws (with fast-check's shrunk
 * counterexample) on the first 5xx, hang, socket error or stack trace.
 */
export async function fuzzRoutes(target: FuzzTarget, runs: number, seed?: number, onProgress?: (counts: FuzzCounts) => void): Promise<FuzzCounts> {
  const all = routes(target.environment);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const counts: FuzzCounts = { cases: 0, byStatus: {}, status4xx: 0, status5xx: 0 };
  try {
    await fc.assert(
      fc.asyncProperty(fuzzCase(all.length), async (c) => {
        const route = all[c.route]!;
        const path = route.path.replace('{id}', c.pathId) + (c.query !== undefined ? `?${c.query}` : route.query ? `?${route.query}` : '');
        let body: Buffer | undefined;
        if (route.body || route.raw) {
          const base = route.raw ? route.raw() : JSON.stringify(mutate(route.body!(), c.mutation, route.schema));
          body = mutateBytes(Buffer.from(base ?? 'null'), c.byteMutation);
        }
        const headers: http.OutgoingHttpHeaders = {};
        const type = c.contentType === 'default' ? (route.contentType ?? (body ? 'application/json' : undefined)) : c.contentType;
        if (type !== undefined) headers['content-type'] = type;
        if (c.contentEncoding !== undefined && body) headers['content-encoding'] = c.contentEncoding;
        if (body) headers['content-length'] = body.length;
        if (c.authHeader === 'valid') {
          if (route.auth) headers.authorization = `Bearer ${target.token}`;
        } else if (c.authHeader !== undefined) {
          headers.authorization = c.authHeader;
        }
        const res = await send(target, agent, route.method, path, headers, body);
        counts.cases++;
        counts.byStatus[res.status] = (counts.byStatus[res.status] ?? 0) + 1;
        if (res.status >= 400 && res.status < 500) counts.status4xx++;
        if (res.status >= 500) counts.status5xx++;
        if (onProgress && counts.cases % 1000 === 0) onProgress(counts);
        if (res.status >= 500) throw new Error(`${route.method} ${path} answered ${res.status}: ${res.body.slice(0, 500)}`);
        if (STACK.test(res.body)) throw new Error(`${route.method} ${path} (${res.status}) shows internals: ${res.body.slice(0, 500)}`);
      }),
      { numRuns: runs, ...(seed !== undefined ? { seed } : {}), endOnFailure: true },
    );
  } finally {
    agent.destroy();
  }
  return counts;
}
