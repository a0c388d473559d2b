/**
 * @module http/openapi/schemas
 * JSON Schemas (2020-12, as OpenAPI 3.1 takes them) of request and response bodies. Request
 * bodies are the very schemas the routes validate with (item, recommendation request, feed) or,
 * for events, derived from the same EVENT_TYPES table checkEvent reads: one source of truth.
 * Response schemas describe what the routes write; the OpenAPI test validates real answers
 * against them.
 */
import { COMMON_OPTIONAL, EVENT_TYPES, MAX_BASKET_ENTRIES, MAX_ID_LENGTH, type FieldKind } from '../../domain/event.ts';
import { FEED_BODY } from '../schemas/feed.ts';
import { ITEM_SCHEMA } from '../../domain/item-schema.ts';
import { REQUEST_SCHEMA } from '../schemas/recommendation.ts';
import { MAX_EVENTS_PER_REQUEST } from '../routes/events.ts';

type Schema = Record<string, unknown>;

const STRING_ID = { type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH };

function fieldSchema(kind: FieldKind): Schema {
  switch (kind) {
    case 'id':
    case 'label':
      return STRING_ID;
    case 'user':
      return { anyOf: [STRING_ID, { type: 'null' }] };
    case 'integer':
      return { type: 'integer' };
    case 'number':
      return { type: 'number' };
    case 'basket':
      return {
        type: 'array',
        maxItems: MAX_BASKET_ENTRIES,
        items: { type: 'object', required: ['id'], properties: { id: STRING_ID }, additionalProperties: { type: ['string', 'number', 'boolean', 'null'] } },
      };
  }
}

/** One schema per event type, from SPEC.md's table as domain/event.ts holds it. */
function eventSchemas(): Schema[] {
  return Object.entries(EVENT_TYPES).map(([type, spec]) => {
    const fields = { ...COMMON_OPTIONAL, ...spec.optional, ...spec.required };
    return {
      title: type,
      type: 'object',
      additionalProperties: false,
      required: ['event_type', ...Object.keys(spec.required)],
      properties: { event_type: { const: type }, ...Object.fromEntries(Object.entries(fields).map(([name, kind]) => [name, fieldSchema(kind)])) },
    };
  });
}

const PROBLEM = {
  type: 'object',
  description: 'RFC 9457 problem details; `errors` names each failing field (events: with its index)',
  additionalProperties: false,
  required: ['type', 'title', 'status', 'detail', 'request_id'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    request_id: { type: 'string', description: 'also in the X-Request-Id response header' },
    errors: {
      type: 'array',
      items: { type: 'object', required: ['path', 'message'], properties: { index: { type: 'integer' }, path: { type: 'string', description: 'JSON Pointer (RFC 6901) into the body, "" for the body itself; a query or path parameter by its name' }, message: { type: 'string' } } },
    },
  },
};

const RECOMMENDED_LIST = {
  type: 'object',
  required: ['list_name', 'list_size', 'limit', 'items'],
  properties: {
    list_name: { type: 'string' },
    alias: { type: 'string' },
    list_key: { type: 'string', description: 'for GET /recommendations/lists (when the list cache is on)' },
    list_size: { type: 'integer', minimum: 0 },
    limit: { type: 'integer', minimum: 0 },
    items: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['item_id', 'rank'],
        properties: { item_id: { type: 'string' }, rank: { type: 'integer', minimum: 1 }, information_field: {} },
      },
    },
  },
};

const RECOMMENDATION_RESPONSE = {
  type: 'object',
  additionalProperties: false,
  required: ['request_id', 'user_group', 'device_id', 'lists'],
  properties: {
    request_id: { type: 'string' },
    user_group: { type: 'string' },
    device_id: { type: 'string' },
    user_id: { type: 'string' },
    lists: { type: 'array', items: RECOMMENDED_LIST },
  },
};

const FEED = {
  type: 'object',
  required: ['feed_id', 'url', 'format', 'item_type'],
  properties: { feed_id: { type: 'string' }, url: { type: 'string' }, format: { type: 'string' }, item_type: { type: 'string' }, status: { type: ['object', 'null'] } },
};

const IMPORT = {
  type: 'object',
  required: ['import_id', 'state'],
  properties: { import_id: { type: 'string' }, state: { enum: ['receiving', 'queued', 'processing', 'done', 'failed'] } },
};

const NUMBERS = { type: 'object', additionalProperties: { type: 'number' } } as const;
const NULLABLE_NUMBER = { type: ['number', 'null'] } as const;
const REPORT: Schema = {
  type: 'object',
  required: ['from', 'to', 'granularity', 'rows', 'totals', 'intake', 'coverage', 'latency_ms'],
  properties: {
    from: { type: 'string' },
    to: { type: 'string' },
    granularity: { enum: ['day', 'hour'] },
    rows: {
      type: 'array',
      items: {
        type: 'object',
        required: ['day', 'dimension', 'value', 'metrics'],
        properties: { day: { type: 'string' }, hour: { type: 'string' }, dimension: { type: 'string' }, value: { type: 'string' }, metrics: NUMBERS },
      },
    },
    totals: {
      type: 'array',
      items: {
        type: 'object',
        required: ['dimension', 'value', 'metrics'],
        properties: { dimension: { type: 'string' }, value: { type: 'string' }, metrics: { type: 'object', additionalProperties: NULLABLE_NUMBER } },
      },
    },
    intake: NUMBERS,
    coverage: {
      type: 'object',
      required: ['recommended_items', 'catalog_items', 'share'],
      properties: { recommended_items: { type: 'integer' }, catalog_items: { type: 'integer' }, share: NULLABLE_NUMBER },
    },
    latency_ms: {
      type: 'object',
      required: ['requests', 'p50', 'p90', 'p99'],
      properties: { requests: { type: 'integer' }, p50: NULLABLE_NUMBER, p90: NULLABLE_NUMBER, p99: NULLABLE_NUMBER },
    },
  },
};
const ARM = { type: 'object', required: ['value', 'n'], properties: { value: NULLABLE_NUMBER, n: { type: 'number' } } } as const;
const AB_REPORT: Schema = {
  type: 'object',
  required: ['from', 'to', 'service_group', 'unit', 'confidence', 'comparisons'],
  properties: {
    from: { type: 'string' },
    to: { type: 'string' },
    service_group: { type: 'string' },
    unit: { type: 'string' },
    confidence: { type: 'number' },
    comparisons: {
      type: 'array',
      items: {
        type: 'object',
        required: ['control_group', 'metrics'],
        properties: {
          control_group: { type: 'string' },
          metrics: {
            type: 'array',
            items: {
              type: 'object',
              required: ['metric', 'service', 'control', 'lift', 'ci95', 'p_value'],
              properties: {
                metric: { enum: ['ctr', 'conversion_rate', 'revenue_per_user'] },
                service: ARM,
                control: ARM,
                lift: NULLABLE_NUMBER,
                ci95: { oneOf: [{ type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 }, { type: 'null' }] },
                p_value: NULLABLE_NUMBER,
              },
            },
          },
        },
      },
    },
  },
};
const ITEM_COUNTS = {
  type: 'array',
  items: { type: 'object', required: ['item_type', 'item_id', 'count'], properties: { item_type: { type: 'string' }, item_id: { type: 'string' }, count: { type: 'integer' } } },
} as const;
const ITEMS_REPORT: Schema = {
  type: 'object',
  required: ['from', 'to', 'recommended', 'clicked'],
  properties: { from: { type: 'string' }, to: { type: 'string' }, recommended: ITEM_COUNTS, clicked: ITEM_COUNTS },
};

/** Every named schema of the document (`#/components/schemas/<name>`). */
export const COMPONENT_SCHEMAS: Record<string, Schema> = {
  Problem: PROBLEM,
  Item: ITEM_SCHEMA as unknown as Schema,
  ItemList: {
    type: 'object',
    additionalProperties: false,
    required: ['items', 'next_cursor'],
    properties: {
      items: { type: 'array', items: { type: 'object', additionalProperties: false, required: ['item_id', 'enabled'], properties: { item_id: { type: 'string' }, enabled: { type: 'boolean' } } } },
      next_cursor: { type: ['string', 'null'] },
    },
  },
  Event: { oneOf: eventSchemas() },
  EventBatch: {
    type: 'object',
    additionalProperties: false,
    required: ['events'],
    properties: { events: { type: 'array', minItems: 1, maxItems: MAX_EVENTS_PER_REQUEST, items: { $ref: '#/components/schemas/Event' } } },
  },
  RecentEvents: {
    type: 'object',
    required: ['events'],
    properties: { events: { type: 'array', items: { type: 'object', required: ['event_type', 'accepted_at'], properties: { event_type: { type: 'string' }, accepted_at: { type: 'string' } } } } },
  },
  RecommendationRequest: REQUEST_SCHEMA as unknown as Schema,
  RecommendationResponse: RECOMMENDATION_RESPONSE,
  Token: {
    type: 'object',
    additionalProperties: false,
    required: ['access_token', 'token_type', 'expires_in', 'scope'],
    properties: { access_token: { type: 'string' }, token_type: { const: 'Bearer' }, expires_in: { type: 'integer' }, scope: { type: 'string' } },
  },
  TokenRequest: {
    type: 'object',
    required: ['grant_type'],
    properties: { grant_type: { const: 'client_credentials' }, client_id: { type: 'string' }, client_secret: { type: 'string' }, scope: { type: 'string' } },
  },
  OAuthError: { type: 'object', required: ['error', 'error_description'], properties: { error: { type: 'string' }, error_description: { type: 'string' } } },
  Jwks: { type: 'object', required: ['keys'], properties: { keys: { type: 'array', items: { type: 'object', required: ['kty'] } } } },
  Health: {
    type: 'object',
    required: ['status'],
    properties: {
      status: { const: 'ok' },
      model_builder: {
        type: ['object', 'null'],
        properties: {
          // Per environment: the log position the builder applied (readable by the ranking workers),
          // the log's end, the difference, and the newest event applied (its acceptance time and age).
          environments: {
            type: 'object',
            additionalProperties: {
              type: 'object',
              required: ['applied_position', 'log_position', 'lag_events', 'newest_event_at', 'newest_event_age_ms'],
              properties: {
                applied_position: { type: 'integer', minimum: 0 },
                log_position: { type: 'integer', minimum: 0 },
                lag_events: { type: 'integer', minimum: 0 },
                newest_event_at: { type: ['string', 'null'], format: 'date-time' },
                newest_event_age_ms: { type: ['integer', 'null'] },
                // The report counters' own position in the log (their thread), null until it reports.
                reports_position: { type: ['integer', 'null'], minimum: 0 },
                reports_lag_events: { type: ['integer', 'null'], minimum: 0 },
              },
            },
          },
          // The builder's copy of the catalog's item layout: the change it covers, the feed's end, the difference.
          catalog: {
            type: 'object',
            required: ['applied_position', 'log_position', 'lag_changes'],
            properties: {
              applied_position: { type: 'integer', minimum: 0 },
              log_position: { type: 'integer', minimum: 0 },
              lag_changes: { type: 'integer', minimum: 0 },
            },
          },
        },
      },
      // Per environment: the trained model in service (`last_build`, never null once one serves) and its builds.
      trained_model: {
        type: ['object', 'null'],
        additionalProperties: {
          type: 'object',
          required: ['building', 'builds', 'failures', 'last_build'],
          properties: {
            last_build: {
              type: ['object', 'null'],
              required: ['version', 'events_position', 'built_at', 'age_ms'],
              properties: {
                version: { type: 'integer' },
                events_position: { type: 'integer', minimum: 0 },
                built_at: { type: 'string', format: 'date-time' },
                age_ms: { type: 'integer' },
                peak_rss_bytes: { type: ['integer', 'null'] },
              },
            },
          },
        },
      },
    },
  },
  Ready: {
    type: 'object',
    additionalProperties: false,
    required: ['status'],
    properties: { status: { enum: ['ready', 'not_ready'] }, reasons: { type: 'array', items: { type: 'string' } } },
  },
  Report: REPORT,
  AbReport: AB_REPORT,
  ItemsReport: ITEMS_REPORT,
  ModelRebuild: { type: 'object', required: ['environment', 'status'], properties: { environment: { type: 'string' }, status: { type: 'string' } } },
  FeedBody: FEED_BODY as unknown as Schema,
  Feed: FEED,
  FeedList: { type: 'object', required: ['feeds'], properties: { feeds: { type: 'array', items: FEED } } },
  Import: IMPORT,
  ImportList: { type: 'object', required: ['imports'], properties: { imports: { type: 'array', items: IMPORT } } },
};
