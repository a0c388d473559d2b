/**
 * @module http/routes/feeds
 * Operator endpoints for catalog feeds (SPEC.md "Feed read (pull)"; paths and statuses are
 * DESIGN.md's, SPEC.md shows none): list and add feeds of an environment, read, replace and
 * remove one, and poll one now. Definitions live in LMDB (store/feeds.ts), so they survive
 * restarts; feeds declared in the configuration file are read-only here (409). Polling happens
 * in the ingest worker; POST .../poll waits for that poll and answers with the new status.
 */
import type { Config } from '../../config/types.ts';
import { E } from '../../domain/errors.ts';
import type { IngestWorker } from '../../main-thread/ingest-supervisor.ts';
import { getFeed, getFeedStatus, listFeeds, newFeedId, putFeed, removeFeed } from '../../store/feeds.ts';
import { parseAllowList, type AllowList } from '../../outbound/allow-list.ts';
import type { Store } from '../../store/open.ts';
import { authorize, type Authorizer } from '../auth.ts';
import { environmentOf } from '../environment.ts';
import { parseJsonBody } from '../read-body.ts';
import { sendEmpty, sendJson, type StatusMap } from '../respond.ts';
import { feedToWire, parseFeedBody } from '../schemas/feed.ts';
import type { HttpServer, RequestInfo } from '../server.ts';
import { fieldErrorsText } from '../../domain/field-errors.ts';

/** GET list / one, DELETE, poll: 200; 401; 404 unknown environment or feed; 409 a configured feed. */
const STATUS_READ: StatusMap = { unauthorized: 401, environmentNotFound: 404, feedNotFound: 404, conflict: 409 };
/** POST and PUT: 201 created / 200 replaced; 400 not JSON or not a valid feed; 401; 404; 409; 413. */
const STATUS_WRITE: StatusMap = {
  bodyNotJson: 400,
  bodyRequired: 400,
  invalidRequest: 400,
  unauthorized: 401,
  environmentNotFound: 404,
  conflict: 409,
  bodyTooLarge: 413,
};

export interface FeedRoutesDeps {
  store: Store;
  ingest: IngestWorker;
  auth: Authorizer;
  environments: Config['environments'];
}

async function authorised(deps: FeedRoutesDeps, req: RequestInfo): Promise<{ environment: string; itemTypes: readonly string[]; allow: AllowList }> {
  const environment = req.params[0] ?? '';
  await authorize(deps.auth, req.authorization, environment);
  const env = environmentOf(deps.environments, environment);
  return { environment, itemTypes: env.itemTypes, allow: parseAllowList(env.outbound.allow) };
}

function knownFeed(deps: FeedRoutesDeps, environment: string, feedId: string) {
  const def = getFeed(deps.store, environment, feedId);
  if (!def) throw E.feedNotFound(environment, feedId);
  return def;
}

function readOnly(feedId: string) {
  return E.conflict(`Feed '${feedId}' is declared in the configuration file: change or remove it there`);
}

export function registerFeedRoutes(server: HttpServer, deps: FeedRoutesDeps): void {
  const all = '/api/:environment/feeds';
  const one = '/api/:environment/feeds/:feed_id';
  const wire = (environment: string, feedId: string) => feedToWire(knownFeed(deps, environment, feedId), getFeedStatus(deps.store, environment, feedId));

  server.route('get', all, { status: STATUS_READ }, async (ex, req) => {
    const { environment } = await authorised(deps, req);
    const feeds = listFeeds(deps.store, environment).map((def) => feedToWire(def, getFeedStatus(deps.store, environment, def.feedId)));
    sendJson(ex, 200, { feeds });
  });

  server.route('post', all, { status: STATUS_WRITE, readsBody: true }, async (ex, req, body) => {
    const { environment, itemTypes, allow } = await authorised(deps, req);
    const parsed = parseFeedBody(parseJsonBody(body), environment, undefined, itemTypes, allow);
    if ('errors' in parsed) throw E.invalidRequest(fieldErrorsText(parsed.errors), parsed.errors);
    const feedId = parsed.feedIdGiven ? parsed.feed.feedId : newFeedId();
    if (getFeed(deps.store, environment, feedId)) throw E.conflict(`Feed '${feedId}' already exists in environment '${environment}': PUT replaces it`);
    const now = new Date().toISOString();
    await putFeed(deps.store, { ...parsed.feed, feedId, source: 'api', createdAt: now, updatedAt: now });
    sendJson(ex, 201, wire(environment, feedId), { Location: `/api/${environment}/feeds/${encodeURIComponent(feedId)}` });
  });

  server.route('get', one, { status: STATUS_READ }, async (ex, req) => {
    const { environment } = await authorised(deps, req);
    sendJson(ex, 200, wire(environment, req.params[1] ?? ''));
  });

  server.route('put', one, { status: STATUS_WRITE, readsBody: true }, async (ex, req, body) => {
    const { environment, itemTypes, allow } = await authorised(deps, req);
    const feedId = req.params[1] ?? '';
    const existing = getFeed(deps.store, environment, feedId);
    if (existing?.source === 'config') throw readOnly(feedId);
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(feedId)) throw E.invalidRequest(`'${feedId}' is not a feed id`, [{ path: 'feed_id', message: 'must be 1 to 64 of A-Z a-z 0-9 _ . -' }]);
    const parsed = parseFeedBody(parseJsonBody(body), environment, feedId, itemTypes, allow, existing);
    if ('errors' in parsed) throw E.invalidRequest(fieldErrorsText(parsed.errors), parsed.errors);
    const now = new Date().toISOString();
    const outcome = await putFeed(deps.store, { ...parsed.feed, source: 'api', createdAt: existing?.createdAt ?? now, updatedAt: now });
    sendJson(ex, outcome === 'created' ? 201 : 200, wire(environment, feedId));
  });

  server.route('del', one, { status: STATUS_READ }, async (ex, req) => {
    const { environment } = await authorised(deps, req);
    const feedId = req.params[1] ?? '';
    if (knownFeed(deps, environment, feedId).source === 'config') throw readOnly(feedId);
    await removeFeed(deps.store, environment, feedId);
    sendEmpty(ex, 200);
  });

  server.route('post', `${one}/poll`, { status: STATUS_READ }, async (ex, req) => {
    const { environment } = await authorised(deps, req);
    const feedId = req.params[1] ?? '';
    knownFeed(deps, environment, feedId);
    if (!(await deps.ingest.pollNow(environment, feedId))) throw E.feedNotFound(environment, feedId);
    // The ingest worker committed the status; this thread's read snapshot may predate it.
    deps.store.root.resetReadTxn();
    sendJson(ex, 200, wire(environment, feedId));
  });
}
