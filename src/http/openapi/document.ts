/**
 * @module http/openapi/document
 * The OpenAPI 3.1 document of the running service, built from the routes the server actually
 * registered: paths from their patterns, error responses from their STATUS maps (the same maps
 * respond.ts answers with), bodies from openapi/schemas.ts. OPERATIONS adds what the code cannot
 * say (summary, success bodies); a registered route without an entry, or an entry without a
 * route, fails the start, so the document and the server cannot drift apart.
 */
import { STATUS_CODES } from 'node:http';
import { E, type AppError, type ErrorKind } from '../../domain/errors.ts';
import { METHOD_NAMES, type RegisteredRoute } from '../server.ts';
import { COMPONENT_SCHEMAS } from './schemas.ts';

interface Operation {
  summary: string;
  tag: string;
  auth?: boolean;
  query?: Array<{ name: string; required?: boolean; schema: Record<string, unknown>; description?: string }>;
  /** Media type → component schema name of the request body. */
  body?: Record<string, string>;
  /** Status of each answer the handler writes itself (successes; OAuth errors) → media type → component schema name ('' for no body). */
  ok: Record<number, Record<string, string> | ''>;
}

const JSON_TYPE = 'application/json';
/** proto/affinity.proto: EventBatch, RecommendationRequest, RecommendationResponse. */
const PROTOBUF = 'application/x-protobuf';
const INT = { type: 'integer', minimum: 1 };

/** Keyed `METHOD pattern` as the routes register them. */
const OPERATIONS: Record<string, Operation> = {
  'GET /health': { summary: 'Liveness, with the model builder and trainer progress', tag: 'operations', ok: { 200: { [JSON_TYPE]: 'Health' } } },
  'GET /ready': { summary: 'Readiness: 200 when storage, workers and every environment model serve, else 503 with reasons', tag: 'operations', ok: { 200: { [JSON_TYPE]: 'Ready' }, 503: { [JSON_TYPE]: 'Ready' } } },
  'GET /metrics': { summary: 'Prometheus metrics (text format)', tag: 'operations', ok: { 200: { 'text/plain': '' } } },
  'GET /api/openapi.json': { summary: 'This document', tag: 'operations', ok: { 200: { [JSON_TYPE]: '' } } },
  'GET /docs': { summary: 'API documentation page (Swagger UI)', tag: 'operations', ok: { 200: { 'text/html': '' } } },
  'GET /docs/:asset': { summary: 'A Swagger UI asset', tag: 'operations', ok: { 200: { 'text/css': '', 'text/javascript': '', 'image/png': '' } } },
  'POST /api/oauth/token': { summary: 'OAuth 2.0 client-credentials grant (Basic or form client authentication)', tag: 'auth', body: { 'application/x-www-form-urlencoded': 'TokenRequest' }, ok: { 200: { [JSON_TYPE]: 'Token' }, 400: { [JSON_TYPE]: 'OAuthError' }, 401: { [JSON_TYPE]: 'OAuthError' }, 429: { [JSON_TYPE]: 'OAuthError' } } },
  'GET /.well-known/jwks.json': { summary: 'Public keys of the token signer', tag: 'auth', ok: { 200: { [JSON_TYPE]: 'Jwks' } } },
  'PUT /api/:environment/items/:item_type/:item_id': { summary: 'Create or replace an item (an empty body re-enables a known one)', tag: 'items', auth: true, body: { [JSON_TYPE]: 'Item' }, ok: { 200: '' } },
  'POST /api/:environment/items/:item_type': { summary: 'Create or replace an item (id in the body)', tag: 'items', auth: true, body: { [JSON_TYPE]: 'Item' }, ok: { 200: '' } },
  'GET /api/:environment/items/:item_type/:item_id': { summary: 'Read an item', tag: 'items', auth: true, ok: { 200: { [JSON_TYPE]: 'Item' } } },
  'DELETE /api/:environment/items/:item_type/:item_id': { summary: 'Delete an item (its events stay)', tag: 'items', auth: true, ok: { 200: '' } },
  'POST /api/:environment/items/:item_type/:item_id/enable': { summary: 'Enable an item for recommendation', tag: 'items', auth: true, ok: { 200: '' } },
  'POST /api/:environment/items/:item_type/:item_id/disable': { summary: 'Disable an item for recommendation', tag: 'items', auth: true, ok: { 200: '' } },
  'GET /api/:environment/items/:item_type': {
    summary: 'List item ids of a type, paginated',
    tag: 'items',
    auth: true,
    query: [{ name: 'cursor', schema: { type: 'string' } }, { name: 'limit', schema: INT }],
    ok: { 200: { [JSON_TYPE]: 'ItemList' } },
  },
  'POST /api/:environment/events': {
    summary: 'Track a batch of events (no token; stored whole or refused whole)',
    tag: 'events',
    body: { [JSON_TYPE]: 'EventBatch', [PROTOBUF]: '' },
    ok: { 200: '' },
  },
  'GET /api/:environment/events': { summary: 'Most recent events of the environment', tag: 'events', auth: true, query: [{ name: 'limit', schema: { ...INT, maximum: 1000 } }], ok: { 200: { [JSON_TYPE]: 'RecentEvents' } } },
  'POST /api/:environment/recommendations/requests': {
    summary: 'Request recommendation lists (JSON, or protobuf with Accept: application/x-protobuf)',
    tag: 'recommendations',
    auth: true,
    body: { [JSON_TYPE]: 'RecommendationRequest', [PROTOBUF]: '' },
    ok: { 200: { [JSON_TYPE]: 'RecommendationResponse', [PROTOBUF]: '' } },
  },
  'GET /api/:environment/recommendations/lists': {
    summary: 'Another page of a list returned earlier (by list_key)',
    tag: 'recommendations',
    auth: true,
    query: [{ name: 'list_key', required: true, schema: { type: 'string' } }, { name: 'offset', required: true, schema: INT }, { name: 'limit', required: true, schema: INT }],
    ok: { 200: { [JSON_TYPE]: 'RecommendationResponse' } },
  },
  'GET /api/:environment/reports': {
    summary: 'Report counters per day or hour and dimension, totals with CTR, event intake, coverage and latency percentiles',
    tag: 'reports',
    auth: true,
    query: [
      { name: 'from', schema: { type: 'string', format: 'date' }, description: 'first day (UTC), default six days before to' },
      { name: 'to', schema: { type: 'string', format: 'date' }, description: 'last day (UTC), default today' },
      { name: 'granularity', schema: { enum: ['day', 'hour'] } },
      { name: 'breakdown', schema: { enum: ['list_name', 'user_group', 'channel', 'page_type'] }, description: 'only this dimension in rows and totals' },
    ],
    ok: { 200: { [JSON_TYPE]: 'Report' } },
  },
  'GET /api/:environment/reports/ab': {
    summary: 'A/B comparison: the service group against each control group (lift, 95% interval, p-value, sample sizes)',
    tag: 'reports',
    auth: true,
    query: [{ name: 'from', schema: { type: 'string', format: 'date' } }, { name: 'to', schema: { type: 'string', format: 'date' } }],
    ok: { 200: { [JSON_TYPE]: 'AbReport' } },
  },
  'GET /api/:environment/reports/items': {
    summary: 'The most recommended and most clicked items',
    tag: 'reports',
    auth: true,
    query: [{ name: 'from', schema: { type: 'string', format: 'date' } }, { name: 'to', schema: { type: 'string', format: 'date' } }, { name: 'limit', schema: { ...INT, maximum: 100 } }],
    ok: { 200: { [JSON_TYPE]: 'ItemsReport' } },
  },
  'GET /dashboard': { summary: 'Reporting dashboard (web page; signs in with a client id and secret)', tag: 'reports', ok: { 200: { 'text/html': '' } } },
  'GET /dashboard/:file': { summary: 'A dashboard asset (script, style sheet)', tag: 'reports', ok: { 200: { 'text/css': '', 'text/javascript': '' } } },
  'POST /api/:environment/model/rebuild': { summary: 'Rebuild the trained model now', tag: 'model', auth: true, ok: { 200: { [JSON_TYPE]: 'ModelRebuild' } } },
  'GET /api/:environment/feeds': { summary: 'List feeds with their last poll status', tag: 'feeds', auth: true, ok: { 200: { [JSON_TYPE]: 'FeedList' } } },
  'POST /api/:environment/feeds': { summary: 'Add a feed', tag: 'feeds', auth: true, body: { [JSON_TYPE]: 'FeedBody' }, ok: { 201: { [JSON_TYPE]: 'Feed' } } },
  'GET /api/:environment/feeds/:feed_id': { summary: 'Read a feed', tag: 'feeds', auth: true, ok: { 200: { [JSON_TYPE]: 'Feed' } } },
  'PUT /api/:environment/feeds/:feed_id': { summary: 'Create or replace a feed', tag: 'feeds', auth: true, body: { [JSON_TYPE]: 'FeedBody' }, ok: { 200: { [JSON_TYPE]: 'Feed' }, 201: { [JSON_TYPE]: 'Feed' } } },
  'DELETE /api/:environment/feeds/:feed_id': { summary: 'Remove a feed', tag: 'feeds', auth: true, ok: { 200: '' } },
  'POST /api/:environment/feeds/:feed_id/poll': { summary: 'Poll a feed now', tag: 'feeds', auth: true, ok: { 200: { [JSON_TYPE]: 'Feed' } } },
  'POST /api/:environment/imports': { summary: 'Upload a catalog file (CSV, JSON, XML; gzip allowed) for import', tag: 'imports', auth: true, body: { 'text/csv': '', [JSON_TYPE]: '', 'application/xml': '' }, ok: { 202: { [JSON_TYPE]: 'Import' } } },
  'GET /api/:environment/imports': { summary: 'Recent imports', tag: 'imports', auth: true, query: [{ name: 'limit', schema: INT }], ok: { 200: { [JSON_TYPE]: 'ImportList' } } },
  'GET /api/:environment/imports/:import_id': {
    summary: 'An import: state, counters, rejected rows',
    tag: 'imports',
    auth: true,
    query: [{ name: 'rejected_after', schema: { type: 'integer', minimum: 0 } }, { name: 'rejected_limit', schema: INT }],
    ok: { 200: { [JSON_TYPE]: 'Import' } } },
};


/** `/api/:environment/items` → `/api/{environment}/items`. */
export function openApiPath(pattern: string): string {
  return pattern.replace(/:([A-Za-z_]+)/g, '{$1}');
}

function content(byType: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(byType).map(([type, schema]) => [type, schema ? { schema: { $ref: `#/components/schemas/${schema}` } } : {}]));
}

/** A kind's default status (the factories only format their arguments into messages). */
function defaultStatus(kind: ErrorKind): number {
  return (E[kind] as (...args: unknown[]) => AppError)('', '', '', [], 0).status;
}

/**
 * The statuses a route may answer with on error: each kind it can raise, through its STATUS map
 * or at the kind's default status. Besides the kinds its map names, a route raises those of the
 * server around it: `invalidRequest` for a path segment that is not valid percent-encoding,
 * `environmentNotFound` under /api/:environment, `unauthorized` behind a token, and for a body
 * read by the server: too large, an unknown Content-Encoding, undecodable gzip/deflate, none.
 */
function errorStatuses(route: DocumentedRoute, auth: boolean): number[] {
  const kinds = new Set<string>([...Object.keys(route.status), 'internal']);
  if (route.pattern.includes(':')) kinds.add('invalidRequest');
  if (route.pattern.startsWith('/api/:environment/')) kinds.add('environmentNotFound');
  if (auth) kinds.add('unauthorized');
  if (route.readsBody) for (const kind of ['bodyTooLarge', 'unsupportedMediaType', 'invalidRequest', 'bodyRequired']) kinds.add(kind);
  const out = new Set<number>();
  for (const kind of kinds) {
    const status = route.status[kind] ?? (kind in E ? defaultStatus(kind as ErrorKind) : undefined);
    if (status !== undefined) out.add(status);
  }
  return [...out].sort((a, b) => a - b);
}

type DocumentedRoute = RegisteredRoute;

/** Builds the document; throws when a route and OPERATIONS disagree (a start-up failure, not a 500). */
export function buildOpenApi(routes: readonly DocumentedRoute[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const seen = new Set<string>();
  for (const route of routes) {
    const key = `${METHOD_NAMES[route.method]} ${route.pattern}`;
    const op = OPERATIONS[key];
    if (!op) throw new Error(`OpenAPI: route ${key} is not described in http/openapi/document.ts`);
    seen.add(key);
    const params = [...route.pattern.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const responses: Record<string, unknown> = {};
    for (const [status, body] of Object.entries(op.ok)) {
      responses[status] = { description: STATUS_CODES[Number(status)] ?? status, ...(body === '' ? {} : { content: content(body) }) };
    }
    for (const status of errorStatuses(route, op.auth === true)) {
      const problem = content({ 'application/problem+json': 'Problem' });
      const own = responses[status] as { content?: Record<string, unknown> } | undefined;
      // The token endpoint answers its own 400s as OAuth errors, but a body the server cannot
      // read (undecodable gzip) is still a problem: both media types are documented.
      if (own) own.content = { ...own.content, ...problem };
      else responses[status] = { description: STATUS_CODES[status] ?? String(status), content: problem };
    }
    // Both refusals that ask the client to come back later say when (domain/errors.ts, oauth.ts).
    for (const status of [429, 503]) {
      const refusal = responses[status] as { headers?: unknown } | undefined;
      if (refusal && !(status === 503 && route.pattern === '/ready')) {
        refusal.headers = { 'Retry-After': { description: 'seconds to wait before retrying', schema: { type: 'integer', minimum: 0 } } };
      }
    }
    const path = (paths[openApiPath(route.pattern)] ??= {});
    path[route.method === 'del' ? 'delete' : route.method] = {
      operationId: `${route.method}${route.pattern.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
      summary: op.summary,
      tags: [op.tag],
      ...(op.auth ? { security: [{ bearer: [] }] } : {}),
      parameters: [
        ...params,
        ...(op.query ?? []).map((q) => ({ name: q.name, in: 'query', required: q.required ?? false, schema: q.schema })),
        { name: 'X-Request-Id', in: 'header', required: false, schema: { type: 'string', maxLength: 128 }, description: 'echoed in the response; generated when absent' },
      ],
      ...(op.body ? { requestBody: { required: true, content: content(op.body) } } : {}),
      responses,
      ...(route.cors ? { 'x-cors': 'allowed origins per environment (environments.<name>.cors.allowedOrigins); OPTIONS answers preflights' } : {}),
    };
  }
  const unused = Object.keys(OPERATIONS).filter((k) => !seen.has(k));
  if (unused.length > 0) throw new Error(`OpenAPI: described but not registered: ${unused.join(', ')}`);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Affinity',
      version,
      description: 'Self-hosted personalization: item catalog, recommendations and event tracking. Errors are RFC 9457 problem details. Request bodies may be sent with Content-Encoding gzip or deflate.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: COMPONENT_SCHEMAS,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'from POST /api/oauth/token' } },
    },
  };
}

