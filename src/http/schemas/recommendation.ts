/**
 * @module http/schemas/recommendation
 * Validation of POST /{environment}/recommendations/requests (SPEC.md RecommendationRequest,
 * RequestList, ListContentItem, HistoryItem; DESIGN.md filters and `exclude`): a compiled JSON
 * Schema for shapes and types, then the rules that need the environment's configuration. Every
 * violation becomes one `{ path, message }` of a 400. Unknown fields are refused, so a misspelt
 * option is reported rather than silently ignored.
 */
import { Ajv } from 'ajv';
import type { EnvironmentConfig, RecommendConfig } from '../../config/types.ts';
import type { ListFilters } from '../../domain/list-filters.ts';
import { RECOMMENDATION_CHANNELS, STANDARD_PAGE_TYPES } from '../../domain/event.ts';
import { LIST_FILTERS_SCHEMA, filterProblems } from '../../domain/list-filters.ts';
import { E, type FieldError } from '../../domain/errors.ts';
import { ajvFieldErrors, fieldErrorText, pointer } from '../../domain/field-errors.ts';
import type { ItemRef } from '../../serving/task.ts';
import { MAX_ID_LENGTH } from '../../domain/item-schema.ts';

/** SPEC.md Limits: each history holds at most 50 entries. */
export const MAX_HISTORY_ENTRIES = 50;
const MAX_LISTS = 20;
const MAX_HISTORIES = 20;
const MAX_EXCLUDE = 1000;
/** Pages whose context item is required (DESIGN.md). */
const DETAIL_PAGES = new Set(['article_detail', 'product_detail', 'video_detail']);

const ID = { type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH } as const;
const NAME = { type: 'string', minLength: 1, maxLength: 256 } as const;

/** The RecommendationRequest body schema (also the fuzz test's starting point). */
export const REQUEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['page_type', 'channel', 'device_id', 'lists'],
  properties: {
    page_type: NAME,
    channel: NAME,
    device_id: ID,
    user_id: { anyOf: [ID, { type: 'null' }] },
    lists: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_LISTS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['list_name', 'list_size'],
        properties: {
          list_name: NAME,
          list_size: { type: 'integer', minimum: 1 },
          limit: { type: 'integer', minimum: 0 },
          alias: NAME,
          list_content: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['id'],
              properties: { id: ID, item_type: NAME, rank: { type: 'integer', minimum: 1 } },
            },
          },
          filters: LIST_FILTERS_SCHEMA,
        },
      },
    },
    context_item: ID,
    context_item_type: NAME,
    histories: {
      type: 'object',
      maxProperties: MAX_HISTORIES,
      propertyNames: { minLength: 1, maxLength: 256 },
      additionalProperties: {
        type: 'array',
        maxItems: MAX_HISTORY_ENTRIES,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['id'],
          properties: {
            id: ID,
            item_type: NAME,
            reconsumable: { type: 'boolean' },
            timestamp: { type: 'integer', minimum: 0, maximum: 0xffffffff },
          },
        },
      },
    },
    user_group: NAME,
    exclude: { type: 'array', maxItems: MAX_EXCLUDE, items: ID },
  },
} as const;

const validateShape = new Ajv({ allErrors: true }).compile(REQUEST_SCHEMA);

interface WireList {
  list_name: string;
  list_size: number;
  limit?: number;
  alias?: string;
  list_content?: Array<{ id: string; item_type?: string; rank?: number }>;
  filters?: ListFilters;
}

interface WireRequest {
  page_type: string;
  channel: string;
  device_id: string;
  user_id?: string | null;
  lists: WireList[];
  context_item?: string;
  context_item_type?: string;
  histories?: Record<string, Array<{ id: string; item_type?: string; reconsumable?: boolean; timestamp?: number }>>;
  user_group?: string;
  exclude?: string[];
}

export interface RequestedList {
  name: string;
  alias?: string;
  size: number;
  limit: number;
  filters?: ListFilters;
  content: Array<ItemRef & { rank?: number }>;
}

export interface RecommendationRequest {
  pageType: string;
  channel: string;
  deviceId: string;
  userId?: string;
  userGroup?: string;
  context?: ItemRef;
  history: Array<ItemRef & { reconsumable: boolean; timestamp?: number }>;
  exclude: string[];
  lists: RequestedList[];
}

const ref = (id: string, type: string | undefined): ItemRef => (type === undefined ? { id } : { id, type });
/** Shared empty arrays for the common request without list_content or exclude (never written to). */
const NO_CONTENT: RequestedList['content'] = [];
const NO_EXCLUDE: string[] = [];
/** `lists[i]`, written once: the rules below name a list's path whether or not they find a problem. */
const LIST_PATHS = Array.from({ length: MAX_LISTS }, (_, i) => pointer('lists', i));

/** list_content's own rules: ids and ranks unique, ranks within the list, item types known. */
function contentProblems(content: NonNullable<WireList['list_content']>, size: number, at: string, env: EnvironmentConfig, problem: (path: string, message: string) => void): void {
  const ranks = new Set<number>();
  const ids = new Set<string>();
  for (let j = 0; j < content.length; j++) {
    const c = content[j]!;
    // Without a type an id matches any type, so a repeat is judged on the id alone.
    if (ids.has(c.id)) problem(`${at}/list_content/${j}/id`, `'${c.id}' is already in list_content`);
    ids.add(c.id);
    if (c.item_type !== undefined && !env.itemTypes.includes(c.item_type)) {
      problem(`${at}/list_content/${j}/item_type`, `'${c.item_type}' is not an item type of this environment`);
    }
    if (c.rank === undefined) continue;
    if (c.rank > size) problem(`${at}/list_content/${j}/rank`, `${c.rank} is beyond the list (list_size ${size})`);
    if (ranks.has(c.rank)) problem(`${at}/list_content/${j}/rank`, `${c.rank} is taken by another item of list_content`);
    ranks.add(c.rank);
  }
}

function fail(errors: FieldError[]): never {
  const shown = errors.slice(0, 3).map(fieldErrorText);
  if (errors.length > 3) shown.push(`and ${errors.length - 3} more`);
  throw E.invalidRequest(shown.join('; '), errors);
}

/** The validated request, or throws E.invalidRequest (400) naming every failing field. */
export function parseRecommendationRequest(body: unknown, env: EnvironmentConfig, limits: RecommendConfig): RecommendationRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) fail([{ path: '', message: 'must be a JSON object' }]);
  if (!validateShape(body)) fail(ajvFieldErrors(validateShape.errors ?? [], { notAField: 'is not a field of the request', noShape: 'has the wrong type' }));
  const wire = body as WireRequest;
  const errors: FieldError[] = [];
  const problem = (path: string, message: string) => errors.push({ path, message });

  if (!STANDARD_PAGE_TYPES.includes(wire.page_type) && !env.pageTypes.includes(wire.page_type)) {
    problem('/page_type', `'${wire.page_type}' is not a page type of this environment`);
  }
  if (!RECOMMENDATION_CHANNELS.includes(wire.channel) && !env.channels.includes(wire.channel)) {
    problem('/channel', `'${wire.channel}' is not a channel of this environment`);
  }
  if (wire.context_item_type !== undefined && !env.itemTypes.includes(wire.context_item_type)) {
    problem('/context_item_type', `'${wire.context_item_type}' is not an item type of this environment`);
  }
  if (wire.context_item_type !== undefined && wire.context_item === undefined) problem('/context_item', 'is required with context_item_type');
  if (DETAIL_PAGES.has(wire.page_type) && wire.context_item === undefined) problem('/context_item', `is required on ${wire.page_type} pages`);
  if (wire.user_group !== undefined && wire.user_group !== env.serviceGroup && !Object.hasOwn(env.controlGroups, wire.user_group)) {
    problem('/user_group', `'${wire.user_group}' is neither the service group nor a control group of this environment`);
  }

  // Plain loops, and a Set only where the request gives something to compare (list_content):
  // this runs for every request, and closures and Sets per list were most of its garbage.
  const lists = wire.lists;
  let aliases: Set<string> | undefined;
  for (let i = 0; i < lists.length; i++) {
    const l = lists[i]!;
    const at = LIST_PATHS[i] ?? pointer('lists', i);
    if (!Object.hasOwn(env.lists, l.list_name)) problem(`${at}/list_name`, `'${l.list_name}' is not a list of this environment`);
    if (l.alias === undefined) {
      for (let k = 0; k < lists.length; k++) {
        if (k === i || lists[k]!.list_name !== l.list_name) continue;
        problem(`${at}/alias`, `is required: list '${l.list_name}' appears more than once`);
        break;
      }
    } else {
      aliases ??= new Set();
      if (aliases.has(l.alias)) problem(`${at}/alias`, `'${l.alias}' is used by another list`);
      aliases.add(l.alias);
    }
    if (l.list_size > limits.maxListSize) problem(`${at}/list_size`, `must be at most ${limits.maxListSize}`);
    if (l.limit !== undefined && l.limit > l.list_size) problem(`${at}/limit`, `must not exceed list_size (${l.list_size})`);
    if (l.list_content !== undefined && l.list_content.length > 0) contentProblems(l.list_content, l.list_size, at, env, problem);
    if ((l.list_content?.length ?? 0) > l.list_size) problem(`${at}/list_content`, `holds more items than list_size (${l.list_size})`);
    if (l.filters) for (const [field, message] of filterProblems(l.filters, env.itemTypes, env.filterAttributes)) problem(at + pointer('filters', ...field), message);
  }
  if (wire.histories !== undefined) {
    for (const name in wire.histories) {
      const entries = wire.histories[name]!;
      for (let j = 0; j < entries.length; j++) {
        const type = entries[j]!.item_type;
        if (type !== undefined && !env.itemTypes.includes(type)) problem(pointer('histories', name, j, 'item_type'), `'${type}' is not an item type of this environment`);
      }
    }
  }
  if (errors.length > 0) fail(errors);

  const history: RecommendationRequest['history'] = [];
  if (wire.histories !== undefined) {
    for (const name in wire.histories) {
      for (const h of wire.histories[name]!) {
        const entry: RecommendationRequest['history'][number] = { id: h.id, reconsumable: h.reconsumable === true };
        if (h.item_type !== undefined) entry.type = h.item_type;
        if (h.timestamp !== undefined) entry.timestamp = h.timestamp;
        history.push(entry);
      }
    }
  }
  const requested: RequestedList[] = [];
  for (const l of lists) {
    const list: RequestedList = { name: l.list_name, size: l.list_size, limit: l.limit ?? l.list_size, content: NO_CONTENT };
    if (l.alias !== undefined) list.alias = l.alias;
    if (l.filters) list.filters = l.filters;
    if (l.list_content !== undefined && l.list_content.length > 0) {
      list.content = l.list_content.map((c) => ({ ...ref(c.id, c.item_type), ...(c.rank !== undefined ? { rank: c.rank } : {}) }));
    }
    requested.push(list);
  }
  const request: RecommendationRequest = { pageType: wire.page_type, channel: wire.channel, deviceId: wire.device_id, history, exclude: wire.exclude ?? NO_EXCLUDE, lists: requested };
  if (wire.user_id) request.userId = wire.user_id;
  if (wire.user_group !== undefined) request.userGroup = wire.user_group;
  if (wire.context_item !== undefined) request.context = ref(wire.context_item, wire.context_item_type);
  return request;
}
