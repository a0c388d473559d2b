/**
 * @module http/routes/recommendations
 * POST /{environment}/recommendations/requests and GET /{environment}/recommendations/lists
 * (SPEC.md "Recommendations"). The main thread validates, assigns the A/B group, dispatches to
 * the ranking pool and writes the response; control-group requests never reach a worker. With
 * the list cache on, the whole `list_size` list is kept and `list_key` names it.
 */
import type { Config } from '../../config/types.ts';
import { assignUserGroup, isControlGroup } from '../../domain/user-group.ts';
import { uuidV7 } from '../../main-thread/random-pool.ts';
import { E } from '../../domain/errors.ts';
import type { CachedList, ListCache } from '../../main-thread/list-cache.ts';
import type { RankingPool } from '../../main-thread/ranking-pool.ts';
import type { RequestCounter } from '../../main-thread/request-counter.ts';
import { itemsJson, splitIds } from '../../serving/list-json.ts';
import { encodeRankTask } from '../../serving/messages.ts';
import type { RankedList } from '../../serving/task.ts';
import { authorize, type Authorizer } from '../auth.ts';
import { environmentOf } from '../environment.ts';
import { parseJsonBody } from '../read-body.ts';
import { acceptsProtobuf, isProtobuf, PROTOBUF_MEDIA_TYPE, type ProtobufCodec } from '../protobuf.ts';
import { sendBody, type StatusMap } from '../respond.ts';
import { parseRecommendationRequest, type RecommendationRequest } from '../schemas/recommendation.ts';
import type { HttpServer } from '../server.ts';
import { fieldErrorsText } from '../../domain/field-errors.ts';

/** SPEC.md: 200; 400 malformed body, missing information or an invalid value; 401; 503 busy. */
const STATUS_REQUEST: StatusMap = { bodyNotJson: 400, bodyRequired: 400, invalidRequest: 400, unauthorized: 401, bodyTooLarge: 413, unavailable: 503 };
/** SPEC.md: 200; 404 list_key expired or never existed; 400 bad offset/limit. */
const STATUS_LIST: StatusMap = { invalidRequest: 400, listNotFound: 404, unauthorized: 401 };

export interface RecommendationRoutesDeps {
  pool: RankingPool;
  listCache: ListCache;
  requests: RequestCounter;
  auth: Authorizer;
  environments: Config['environments'];
  recommend: Config['recommend'];
  protobuf: ProtobufCodec;
}

/** One list of a protobuf answer (JSON answers are written as text). */
interface AnswerList {
  list_name: string;
  alias?: string;
  list_key?: string;
  list_size: number;
  limit: number;
  items: object[];
}

/** The items of a ranked list's first `shown` as objects, for the protobuf answer. */
function itemObjects(ranked: RankedList): object[] {
  return splitIds(ranked.ids, ranked.ix.length, ranked.shown).map((item_id, i) => ({
    item_id,
    rank: i + 1,
    ...(ranked.information?.[i] !== undefined ? { information_field: ranked.information[i] } : {}),
  }));
}

/** One list of a JSON answer as text; `itemsText` is its `items` array, already JSON. */
function listJson(name: string, alias: string | undefined, listKey: string | undefined, size: number, limit: number, itemsText: string): string {
  const aliasText = alias ? `,"alias":${JSON.stringify(alias)}` : '';
  const keyText = listKey ? `,"list_key":${JSON.stringify(listKey)}` : '';
  return `{"list_name":${JSON.stringify(name)}${aliasText}${keyText},"list_size":${size},"limit":${limit},"items":${itemsText}}`;
}

/** The fields every response starts with, as an object (for the protobuf answer). */
function headObject(requestId: string, userGroup: string, deviceId: string, userId: string | undefined): object {
  return { request_id: requestId, user_group: userGroup, device_id: deviceId, ...(userId ? { user_id: userId } : {}) };
}

/** The fields every response starts with, as JSON text (without the braces). */
function headJson(requestId: string, userGroup: string, deviceId: string, userId: string | undefined): string {
  const user = userId ? `,"user_id":${JSON.stringify(userId)}` : '';
  return `"request_id":${JSON.stringify(requestId)},"user_group":${JSON.stringify(userGroup)},"device_id":${JSON.stringify(deviceId)}${user}`;
}

export function registerRecommendationRoutes(server: HttpServer, deps: RecommendationRoutesDeps): void {
  server.route('post', '/api/:environment/recommendations/requests', { status: STATUS_REQUEST, readsBody: true }, async (ex, req, body) => {
    const startedMs = performance.now();
    const environment = req.params[0] ?? '';
    const authorizing = authorize(deps.auth, req.authorization, environment);
    if (authorizing) await authorizing;
    const env = environmentOf(deps.environments, environment);
    const wire = isProtobuf(req.contentType) ? deps.protobuf.decodeRecommendationRequest(body) : parseJsonBody(body);
    const request = parseRecommendationRequest(wire, env, deps.recommend);
    const nowMs = Date.now();
    const requestId = uuidV7(nowMs);
    const userGroup = request.userGroup ?? assignUserGroup(env, environment, request.userId, request.deviceId);
    const protobuf = acceptsProtobuf(req.accept);
    deps.requests.count(environment, nowMs, request.lists, userGroup, request.channel, request.pageType);

    if (isControlGroup(env, userGroup)) {
      // The customer's own recommendations are shown: attribution only (SPEC.md rule).
      const lists = request.lists.map((l) => ({ list_name: l.name, ...(l.alias ? { alias: l.alias } : {}), list_size: l.size, limit: 0, items: [] }));
      if (protobuf) sendBody(ex, 200, PROTOBUF_MEDIA_TYPE, deps.protobuf.encodeRecommendationResponse({ ...headObject(requestId, userGroup, request.deviceId, request.userId), lists }));
      else sendBody(ex, 200, 'application/json', `{${headJson(requestId, userGroup, request.deviceId, request.userId)},"lists":${JSON.stringify(lists)}}`);
      deps.requests.latency(environment, nowMs, performance.now() - startedMs);
      return;
    }

    const outcome = await deps.pool.rank(encodeRankTask(environment, Math.floor(nowMs / 1000), request));
    if ('errors' in outcome) throw E.invalidRequest(fieldErrorsText(outcome.errors), outcome.errors);
    const protobufLists: AnswerList[] = [];
    let lists = '';
    for (let i = 0; i < request.lists.length; i++) {
      const l = request.lists[i]!;
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
          ids: ranked.ids,
          ix: ranked.ix,
          ...(ranked.information ? { informationFields: ranked.information } : {}),
        };
        listKey = deps.listCache.put(cached, env.listCache.ttlSec);
      }
      deps.requests.recommended(environment, nowMs, ranked.ix, ranked.shown);
      if (protobuf) {
        const items = itemObjects(ranked);
        protobufLists.push({ list_name: l.name, ...(l.alias ? { alias: l.alias } : {}), ...(listKey ? { list_key: listKey } : {}), list_size: ranked.ix.length, limit: items.length, items });
        continue;
      }
      // list_size: the list as computed, fewer than asked when the catalog cannot fill it.
      if (i > 0) lists += ',';
      lists += listJson(l.name, l.alias, listKey, ranked.ix.length, ranked.shown, ranked.itemsJson);
    }
    if (protobuf) sendBody(ex, 200, PROTOBUF_MEDIA_TYPE, deps.protobuf.encodeRecommendationResponse({ ...headObject(requestId, userGroup, request.deviceId, request.userId), lists: protobufLists }));
    else sendBody(ex, 200, 'application/json', `{${headJson(requestId, userGroup, request.deviceId, request.userId)},"lists":[${lists}]}`);
    deps.requests.latency(environment, nowMs, performance.now() - startedMs);
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
    if (errors.length > 0) throw E.invalidRequest(fieldErrorsText(errors), errors);
    const cached = env.listCache.enabled ? deps.listCache.get(environment, key!) : undefined;
    if (!cached) throw E.listNotFound();
    // Items disabled, deleted or expired since the list was computed are left out, and the ones
    // after them move up: the slice is filled from the cached tail, ranked in the list as it
    // stands now (list_size counts what is left).
    const { rankable } = await deps.pool.check({ environment, nowSec: Math.floor(Date.now() / 1000), check: cached.ix });
    const cachedIds = splitIds(cached.ids, cached.ix.length);
    const itemIds: string[] = [];
    const information: Array<string | undefined> = [];
    for (let i = 0; i < cachedIds.length; i++) {
      if (rankable[i] !== 1) continue;
      itemIds.push(cachedIds[i]!);
      information.push(cached.informationFields?.[i]);
    }
    const items = itemsJson(itemIds, cached.informationFields ? information : undefined, offset, limit);
    const head = headJson(cached.requestId, cached.userGroup, cached.deviceId, cached.userId);
    sendBody(ex, 200, 'application/json', `{${head},"lists":[${listJson(cached.listName, undefined, key!, itemIds.length, items.count, items.json)}]}`);
  });
}
