/**
 * @module http/routes/items
 * The Items endpoints of SPEC.md. Each operation's STATUS map is copied from its SPEC.md row
 * (and DESIGN.md's decisions where SPEC.md is open); respond.ts applies it.
 */
import type { Config } from '../../config/types.ts';
import { E, type FieldError } from '../../domain/errors.ts';
import { fieldErrorsText } from '../../domain/field-errors.ts';
import { couldBeItemId, type Catalog } from '../../store/catalog.ts';
import { authorize, type Authorizer } from '../auth.ts';
import { environmentOf } from '../environment.ts';
import { sendEmpty, sendJson, type StatusMap } from '../respond.ts';
import { parseBodyText } from '../read-body.ts';
import { parseItemBody } from '../../domain/item-schema.ts';
import type { HttpServer, RequestInfo } from '../server.ts';

/** PUT and POST: 200 no content; 401; 404 unknown item without body; 415 not an Item; 422 not JSON. */
const STATUS_UPSERT: StatusMap = { bodyNotJson: 422, invalidItem: 415, itemNotFound: 404, unauthorized: 401 };
/** DELETE and GET one: 200; 401; 404. */
const STATUS_READ_DELETE: StatusMap = { itemNotFound: 404, unauthorized: 401 };
/** enable/disable: 200; 400 error in the request (an unknown item, DESIGN.md). */
const STATUS_STATE: StatusMap = { itemNotFound: 400, unauthorized: 401 };
/** List of IDs: 200; 400. */
const STATUS_LIST: StatusMap = { invalidRequest: 400, unauthorized: 401 };

const DEFAULT_PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 1000;

export interface ItemRoutesDeps {
  catalog: Catalog;
  auth: Authorizer;
  environments: Config['environments'];
}

function itemTypesOf(deps: ItemRoutesDeps, environment: string): readonly string[] {
  return environmentOf(deps.environments, environment).itemTypes;
}


/** Validates an Item body against the path; every disagreement is a 415 naming the field. */
function itemFromBody(
  deps: ItemRoutesDeps,
  body: Buffer,
  environment: string,
  itemType: string,
  itemId: string | undefined,
) {
  const parsed = parseItemBody(parseBodyText(body));
  if ('errors' in parsed) throw E.invalidItem(fieldErrorsText(parsed.errors), parsed.errors);
  const { item } = parsed;
  const errors: FieldError[] = [];
  if (item.environment !== environment) {
    errors.push({ path: '/environment', message: `'${item.environment}' differs from the path's '${environment}'` });
  }
  if (item.item_type !== itemType) {
    errors.push({ path: '/item_type', message: `'${item.item_type}' differs from the path's '${itemType}'` });
  }
  if (itemId !== undefined && item.item_id !== itemId) {
    errors.push({ path: '/item_id', message: `'${item.item_id}' differs from the path's '${itemId}'` });
  }
  const itemTypes = itemTypesOf(deps, environment);
  if (!itemTypes.includes(item.item_type)) {
    errors.push({
      path: '/item_type',
      message: `'${item.item_type}' is not an item type of environment '${environment}' (${itemTypes.join(', ')})`,
    });
  }
  if (errors.length > 0) throw E.invalidItem(fieldErrorsText(errors), errors);
  return item;
}

async function upsert(deps: ItemRoutesDeps, req: RequestInfo, body: Buffer | undefined, pathItemId?: string) {
  const [environment = '', itemType = ''] = req.params;
  await authorize(deps.auth, req.authorization, environment);
  if (!body || body.length === 0) {
    if (pathItemId === undefined) throw E.bodyRequired();
    // PUT without a body confirms a known item and changes nothing (SPEC.md: 404 when unknown).
    const known = deps.catalog.get(environment, itemType, pathItemId);
    if (!known) throw E.itemNotFound(environment, itemType, pathItemId);
    return;
  }
  await deps.catalog.put(itemFromBody(deps, body, environment, itemType, pathItemId));
}

function parseListQuery(query: string): { cursor: string | undefined; limit: number } {
  const q = new URLSearchParams(query);
  const errors: FieldError[] = [];
  for (const key of q.keys()) {
    if (key !== 'cursor' && key !== 'limit') errors.push({ path: key, message: 'is not a query parameter of this endpoint' });
  }
  let limit = DEFAULT_PAGE_SIZE;
  const rawLimit = q.get('limit');
  if (rawLimit !== null) {
    limit = /^\d{1,7}$/.test(rawLimit) ? Number(rawLimit) : NaN;
    if (!(limit >= 1 && limit <= MAX_PAGE_SIZE)) {
      errors.push({ path: 'limit', message: `must be an integer from 1 to ${MAX_PAGE_SIZE}` });
    }
  }
  let cursor: string | undefined;
  const rawCursor = q.get('cursor');
  if (rawCursor !== null && rawCursor !== '') {
    cursor = Buffer.from(rawCursor, 'base64url').toString('utf8');
    const roundTrips = Buffer.from(cursor, 'utf8').toString('base64url') === rawCursor;
    if (!roundTrips || !couldBeItemId(cursor)) {
      errors.push({ path: 'cursor', message: 'is not a cursor returned by this endpoint' });
    }
  }
  if (errors.length > 0) throw E.invalidRequest(fieldErrorsText(errors), errors);
  return { cursor, limit };
}

export function registerItemRoutes(server: HttpServer, deps: ItemRoutesDeps): void {
  const one = '/api/:environment/items/:item_type/:item_id';
  const ofType = '/api/:environment/items/:item_type';

  server.route('put', one, { status: STATUS_UPSERT, readsBody: true }, async (ex, req, body) => {
    await upsert(deps, req, body, req.params[2]);
    sendEmpty(ex, 200);
  });

  server.route('post', ofType, { status: STATUS_UPSERT, readsBody: true }, async (ex, req, body) => {
    await upsert(deps, req, body);
    sendEmpty(ex, 200);
  });

  server.route('get', one, { status: STATUS_READ_DELETE }, async (ex, req) => {
    const [environment = '', itemType = '', itemId = ''] = req.params;
    await authorize(deps.auth, req.authorization, environment);
    itemTypesOf(deps, environment);
    const stored = deps.catalog.get(environment, itemType, itemId);
    if (!stored) throw E.itemNotFound(environment, itemType, itemId);
    sendJson(ex, 200, stored.item);
  });

  server.route('del', one, { status: STATUS_READ_DELETE }, async (ex, req) => {
    const [environment = '', itemType = '', itemId = ''] = req.params;
    await authorize(deps.auth, req.authorization, environment);
    itemTypesOf(deps, environment);
    const removed = await deps.catalog.remove(environment, itemType, itemId);
    if (!removed) throw E.itemNotFound(environment, itemType, itemId);
    sendEmpty(ex, 200);
  });

  for (const action of ['enable', 'disable'] as const) {
    server.route('post', `${one}/${action}`, { status: STATUS_STATE }, async (ex, req) => {
      const [environment = '', itemType = '', itemId = ''] = req.params;
      await authorize(deps.auth, req.authorization, environment);
      itemTypesOf(deps, environment);
      const known = await deps.catalog.setEnabled(environment, itemType, itemId, action === 'enable');
      if (!known) throw E.itemNotFound(environment, itemType, itemId);
      sendEmpty(ex, 200);
    });
  }

  server.route('get', ofType, { status: STATUS_LIST }, async (ex, req) => {
    const [environment = '', itemType = ''] = req.params;
    await authorize(deps.auth, req.authorization, environment);
    const itemTypes = itemTypesOf(deps, environment);
    if (!itemTypes.includes(itemType)) {
      throw E.invalidRequest(`'${itemType}' is not an item type of environment '${environment}'`, [
        { path: 'item_type', message: `must be one of ${itemTypes.join(', ')}` },
      ]);
    }
    const { cursor, limit } = parseListQuery(req.query);
    const page = deps.catalog.listIds(environment, itemType, cursor, limit);
    const last = page.items[page.items.length - 1];
    sendJson(ex, 200, {
      items: page.items.map((i) => ({ item_id: i.itemId, enabled: i.enabled })),
      next_cursor: page.more && last ? Buffer.from(last.itemId, 'utf8').toString('base64url') : null,
    });
  });
}
