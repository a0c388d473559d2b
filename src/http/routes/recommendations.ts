/**
 * @module http/routes/recommendations
 * POST /{environment}/recommendations/requests and GET /{environment}/recommendations/lists
 * (SPEC.md "Recommendations"). The main thread validates, assigns the A/B group, dispatches to
 * the ranking pool and writes the response; control-group requests never reach a worker. With
 * the list cache on, the whole `list_size` list is kept and `list_key` names it.
 */
import { v7 as uuidv7 } from 'uuid';
import type { Config, EnvironmentConfig } from '../../config/types.ts';
import { assignUserGroup, isControlGroup } from '../../domain/user-group.ts';
import { random16 } from '../../random-pool.ts';
import { E } from '../../errors.ts';
import type { CachedList, ListCache } from '../../recommend/list-cache.ts';
import type { RankingPool } from '../../recommend/pool.ts';
import type { RecentConsumption } from '../../recommend/recent-consumption.ts';
import type { RequestCounter } from '../../recommend/request-counter.ts';
import type { RankedList, RankTask } from '../../recommend/task.ts';
import { authorize, type Authorizer } from '../auth.ts';
import { environmentOf } from '../environment.ts';
import { parseJsonBody } from '../read-body.ts';
import { acceptsProtobuf, isProtobuf, PROTOBUF_MEDIA_TYPE, type ProtobufCodec } from '../protobuf.ts';
import { sendBody, sendJson, type Exchange, type StatusMap } from '../respond.ts';
import { parseRecommendationRequest, type RecommendationRequest } from '../schemas/recommendation.ts';
import type { HttpServer, RequestInfo } from '../server.ts';

/** SPEC.md: 200; 400 malformed body, missing information or an invalid value; 401; 503 busy. */
const STATUS_REQUEST: StatusMap = { bodyNotJson: 400, bodyRequired: 400, invalidRequest: 400, unauthorized: 401, bodyTooLarge: 413, unavailable: 503 };
/** SPEC.md: 200; 404 list_key expired or never existed; 400 bad offset/limit. */
const STATUS_LIST: StatusMap = { invalidRequest: 400, listNotFound: 404, unauthorized: 401 };

export interface RecommendationRoutesDeps {
  pool: RankingPool;
  listCache: ListCache;
  recent: RecentConsumption;
  requests: RequestCounter;
  auth: Authorizer;
  environments: Config['environments'];
  recommend: Config['recommend'];
  protobuf: ProtobufCodec;
}

type Answer = Parameters<ProtobufCodec['encodeRecommendationResponse']>[0];

/** The answer in the format the client accepts: protobuf when asked for, else JSON. */
function answer(ex: Exchange, req: RequestInfo, codec: ProtobufCodec, body: Answer): void {
  if (acceptsProtobuf(req.accept)) sendBody(ex, 200, PROTOBUF_MEDIA_TYPE, codec.encodeRecommendationResponse(body));
  else sendJson(ex, 200, body);
}

interface ResponseItem {
  item_id: string;
  rank: number;
  information_field?: string;
}

/** Items `offset` (from 1) to offset + limit - 1 of a whole list, with their ranks. */
function slice(list: RankedList, offset: number, limit: number): ResponseItem[] {
  const items: ResponseItem[] = [];
  const end = Math.min(list.itemIds.length, offset - 1 + limit);
  for (let i = offset - 1; i < end; i++) {
    const item: ResponseItem = { item_id: list.itemIds[i]!, rank: i + 1 };
    const info = list.information?.[i];
    if (info !== undefined) item.information_field = info;
    items.push(item);
  }
  return items;
}

function rankTask(environment: string, env: EnvironmentConfig, request: RecommendationRequest, recent: RecentConsumption): RankTask {
  return {
    environment,
    nowSec: Math.floor(Date.now() / 1000),
    ...(request.userId !== undefined ? { userId: request.userId } : {}),
    deviceId: request.deviceId,
    ...(request.context ? { context: request.context } : {}),
    history: request.history,
    recent: recent.of(environment, request.userId, request.deviceId),
    exclude: request.exclude,
    lists: request.lists.map((l) => {
      const config = env.lists[l.name]!;
      return {
        strategy: config.strategy,
        ...(config.fallback ? { fallback: config.fallback } : {}),
        size: l.size,
        itemTypes: config.itemTypes,
        filters: [...(config.filters ? [config.filters] : []), ...(l.filters ? [l.filters] : [])],
        ...(config.informationField ? { informationField: config.informationField } : {}),
        content: l.content,
      };
    }),
  };
}

export function registerRecommendationRoutes(server: HttpServer, deps: RecommendationRoutesDeps): void {
  server.route('post', '/api/:environment/recommendations/requests', { status: STATUS_REQUEST, readsBody: true }, async (ex, req, body) => {
    const environment = req.params[0] ?? '';
    await authorize(deps.auth, req.authorization, environment);
    const env = environmentOf(deps.environments, environment);
    const wire = isProtobuf(req.contentType) ? deps.protobuf.decodeRecommendationRequest(body) : parseJsonBody(body);
    const request = parseRecommendationRequest(wire, env, deps.recommend);
    const requestId = uuidv7({ rng: random16 });
    const userGroup = request.userGroup ?? assignUserGroup(env, environment, request.userId, request.deviceId);
    const head = { request_id: requestId, user_group: userGroup, device_id: request.deviceId, ...(request.userId ? { user_id: request.userId } : {}) };
    deps.requests.count(environment, Date.now(), request.lists.map((l) => l.name), userGroup, request.channel);

    if (isControlGroup(env, userGroup)) {
      // The customer's own recommendations are shown: attribution only (SPEC.md rule).
      const lists = request.lists.map((l) => ({ list_name: l.name, ...(l.alias ? { alias: l.alias } : {}), list_size: l.size, limit: 0, items: [] }));
      answer(ex, req, deps.protobuf, { ...head, lists });
      return;
    }

    const outcome = await deps.pool.rank(rankTask(environment, env, request, deps.recent));
    if ('errors' in outcome) throw E.invalidRequest(outcome.errors.map((e) => `${e.path} ${e.message}`).join('; '), outcome.errors);
    const lists = request.lists.map((l, i) => {
      const ranked = outcome.lists[i]!;
      let listKey: string | undefined;
      if (env.listCache.enabled) {
        const cached: CachedList = {
          environment,
          requestId,
          userGroup,
          deviceId: request.deviceId,
          ...(request.userId ? { userId: request.userId } : {}),
          listName: l.name,
          itemIds: ranked.itemIds,
          ...(ranked.information ? { informationFields: ranked.information } : {}),
        };
        listKey = deps.listCache.put(cached, env.listCache.ttlSec);
      }
      const items = slice(ranked, 1, l.limit);
      return {
        list_name: l.name,
        ...(l.alias ? { alias: l.alias } : {}),
        ...(listKey ? { list_key: listKey } : {}),
        // The list as computed: fewer than asked when the catalog cannot fill it.
        list_size: ranked.itemIds.length,
        limit: items.length,
        items,
      };
    });
    answer(ex, req, deps.protobuf, { ...head, lists });
  });

  server.route('get', '/api/:environment/recommendations/lists', { status: STATUS_LIST }, async (ex, req) => {
    const environment = req.params[0] ?? '';
    await authorize(deps.auth, req.authorization, environment);
    const env = environmentOf(deps.environments, environment);
    const query = new URLSearchParams(req.query);
    const errors = [];
    const key = query.get('list_key');
    if (!key) errors.push({ path: 'list_key', message: 'is required' });
    const positive = (name: string, max: number) => {
      const raw = query.get(name);
      if (raw === null) errors.push({ path: name, message: 'is required' });
      else if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1 || Number(raw) > max) errors.push({ path: name, message: `must be an integer from 1 to ${max}` });
      return Number(raw);
    };
    const offset = positive('offset', deps.recommend.maxListSize);
    const limit = positive('limit', deps.recommend.maxListSize);
    if (errors.length > 0) throw E.invalidRequest(errors.map((e) => `${e.path} ${e.message}`).join('; '), errors);
    const cached = env.listCache.enabled ? deps.listCache.get(environment, key!) : undefined;
    if (!cached) throw E.listNotFound();
    const list: RankedList = { itemIds: cached.itemIds, ...(cached.informationFields ? { information: cached.informationFields } : {}) };
    const items = slice(list, offset, limit);
    sendJson(ex, 200, {
      request_id: cached.requestId,
      user_group: cached.userGroup,
      device_id: cached.deviceId,
      ...(cached.userId ? { user_id: cached.userId } : {}),
      lists: [{ list_name: cached.listName, list_key: key, list_size: cached.itemIds.length, limit: items.length, items }],
    });
  });
}
