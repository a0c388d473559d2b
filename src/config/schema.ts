/**
 * @module config/schema
 * JSON Schema of the merged configuration, compiled once. Unknown keys are rejected so a
 * misspelt key is reported instead of silently ignored.
 */
import { Ajv } from 'ajv';
import { STRATEGY_NAMES } from '../strategies/registry.ts';

const NAME = { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' } as const;
const STRATEGY = { enum: STRATEGY_NAMES } as const;
const NAMES = { type: 'array', items: NAME, uniqueItems: true } as const;

const LIST = {
  type: 'object',
  additionalProperties: false,
  required: ['strategy', 'itemTypes'],
  properties: {
    strategy: STRATEGY,
    itemTypes: NAMES,
    informationField: { type: 'string', minLength: 1 },
    fallback: STRATEGY,
    options: { type: 'object' }, // checked against the strategy's own schema (config/load.ts)
    filters: { type: 'object' }, // checked by the same validator as a request's filters (config/load.ts)
  },
} as const;

const TRAINED = {
  type: 'object',
  additionalProperties: false,
  required: ['enabled', 'method', 'l2', 'dropout', 'maxItems', 'halfLifeSec', 'rebuildIntervalSec', 'rebuildShare', 'maxMemoryBytes', 'weight', 'maxSeeds', 'rowLength', 'neighbourhood', 'ownWeightPower', 'shortHistoryItems'],
  properties: {
    enabled: { type: 'boolean' },
    method: { enum: ['dlae', 'ease'] },
    l2: { type: 'number', exclusiveMinimum: 0 },
    dropout: { type: 'number', minimum: 0, exclusiveMaximum: 1 },
    // The dense head: 20,000 items would be 4.8 GB of working memory and hours of build; the
    // rest of the catalog goes through the local regressions (neighbourhood) whatever its size.
    maxItems: { type: 'integer', minimum: 0, maximum: 20_000 },
    halfLifeSec: { type: 'integer', minimum: 0 },
    rebuildIntervalSec: { type: 'integer', minimum: 0 },
    rebuildShare: { type: 'number', minimum: 0 },
    maxMemoryBytes: { type: 'integer', minimum: 1024 },
    weight: { type: 'number', minimum: 0, maximum: 1000 },
    maxSeeds: { type: 'integer', minimum: 0 },
    rowLength: { type: 'integer', minimum: 1, maximum: 10_000 },
    // Each tail item solves a (neighbourhood + 1)² system: its build cost grows with the cube.
    neighbourhood: { type: 'integer', minimum: 1, maximum: 1000 },
    ownWeightPower: { type: 'number', minimum: 0, maximum: 4 },
    shortHistoryItems: { type: 'number', minimum: 0, maximum: 10_000 },
  },
} as const;

const MODEL = {
  type: 'object',
  additionalProperties: false,
  required: ['eventWeights', 'historyLength', 'cooccurrenceWindow', 'maxNeighbours', 'attributionWindowSec', 'seedHalfLifeSec', 'trained'],
  properties: {
    eventWeights: {
      type: 'object',
      propertyNames: { enum: ['detail_pageview', 'checkpoint', 'item_interaction', 'add_to_cart', 'purchase', 'click_on_recommendation'] },
      additionalProperties: { type: 'number', minimum: 0, maximum: 1000 },
    },
    historyLength: { type: 'integer', minimum: 1, maximum: 10000 },
    cooccurrenceWindow: { type: 'integer', minimum: 0, maximum: 1000 },
    maxNeighbours: { type: 'integer', minimum: 1, maximum: 10000 },
    attributionWindowSec: { type: 'integer', minimum: 0 },
    seedHalfLifeSec: { type: 'integer', minimum: 0 },
    trained: TRAINED,
  },
} as const;

const TEXT = { type: 'string', minLength: 1, maxLength: 1024 } as const;

/** A feed of the configuration file; config/load.ts checks what JSON Schema cannot (domain/feed.ts). */
const FEED = {
  type: 'object',
  additionalProperties: false,
  required: ['url', 'format', 'itemType'],
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 8192 },
    format: { enum: ['rss', 'atom', 'json', 'xml', 'csv'] },
    itemType: NAME,
    interval: { type: 'string', pattern: '^\\d{1,7}[smhd]$' },
    authHeader: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'value'],
      properties: { name: TEXT, value: { type: 'string', maxLength: 8192 } },
    },
    disableMarker: {
      type: 'object',
      additionalProperties: false,
      required: ['field', 'value'],
      properties: { field: TEXT, value: { type: 'string', maxLength: 1024 } },
    },
    itemsPath: TEXT,
    mapping: { type: 'object', minProperties: 1, maxProperties: 200, additionalProperties: TEXT },
    delimiter: { type: 'string', minLength: 1, maxLength: 4 },
  },
} as const;

/** Internal destinations allowed for outbound fetches; config/load.ts checks each entry (outbound/allow-list.ts). */
const OUTBOUND = {
  type: 'object',
  additionalProperties: false,
  required: ['allow'],
  properties: { allow: { type: 'array', maxItems: 1000, items: { type: 'string', minLength: 1, maxLength: 253 } } },
} as const;

const ENVIRONMENT = {
  type: 'object',
  additionalProperties: false,
  required: ['itemTypes', 'pageTypes', 'channels', 'lists', 'filterAttributes', 'listCache', 'serviceGroup', 'controlGroups', 'model'],
  properties: {
    itemTypes: { ...NAMES, minItems: 1 },
    pageTypes: NAMES,
    channels: NAMES,
    lists: { type: 'object', propertyNames: NAME, additionalProperties: LIST },
    filterAttributes: NAMES,
    listCache: {
      type: 'object',
      additionalProperties: false,
      required: ['enabled', 'ttlSec'],
      properties: { enabled: { type: 'boolean' }, ttlSec: { type: 'integer', minimum: 1 } },
    },
    serviceGroup: NAME,
    controlGroups: {
      type: 'object',
      propertyNames: NAME,
      additionalProperties: { type: 'number', minimum: 0, maximum: 1 },
    },
    model: MODEL,
    cors: {
      type: 'object',
      additionalProperties: false,
      required: ['allowedOrigins'],
      properties: {
        allowedOrigins: { type: 'array', uniqueItems: true, items: { type: 'string', pattern: '^(\\*|https?://[^/\\s]+)$' } },
      },
    },
    feeds: { type: 'object', propertyNames: NAME, additionalProperties: FEED },
    outbound: OUTBOUND,
  },
} as const;

const CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['server', 'recommend', 'builder', 'store', 'auth', 'ingest', 'log', 'reports', 'environments'],
  properties: {
    builder: {
      type: 'object',
      additionalProperties: false,
      required: ['niceness', 'flushMs'],
      properties: { niceness: { type: 'integer', minimum: 0, maximum: 19 }, flushMs: { type: 'integer', minimum: 100, maximum: 600000 } },
    },
    recommend: {
      type: 'object',
      additionalProperties: false,
      required: ['workers', 'maxQueue', 'deadlineMs', 'maxBatch', 'maxListSize', 'listCacheItems'],
      properties: {
        workers: { type: 'integer', minimum: 1, maximum: 256 },
        maxQueue: { type: 'integer', minimum: 0 },
        deadlineMs: { type: 'integer', minimum: 1 },
        maxBatch: { type: 'integer', minimum: 1, maximum: 1024 },
        maxListSize: { type: 'integer', minimum: 1, maximum: 100_000 },
        listCacheItems: { type: 'integer', minimum: 0 },
      },
    },
    server: {
      type: 'object',
      additionalProperties: false,
      required: ['host', 'port', 'maxBodyBytes', 'shutdownTimeoutMs', 'reusePort', 'compressMinBytes'],
      properties: {
        host: { type: 'string', minLength: 1 },
        port: { type: 'integer', minimum: 0, maximum: 65535 },
        maxBodyBytes: { type: 'integer', minimum: 1024, maximum: 1024 ** 3 },
        shutdownTimeoutMs: { type: 'integer', minimum: 0 },
        reusePort: { type: 'boolean' },
        compressMinBytes: { type: 'integer', minimum: 0 },
      },
    },
    store: {
      type: 'object',
      additionalProperties: false,
      required: ['dataDir', 'mapSizeBytes'],
      properties: {
        dataDir: { type: 'string', minLength: 1 },
        mapSizeBytes: { type: 'integer', minimum: 1024 ** 2 },
      },
    },
    auth: {
      type: 'object',
      additionalProperties: false,
      required: ['issuer', 'tokenTtlSec', 'tokenCacheSize', 'demoClient', 'tokenEndpoint'],
      properties: {
        issuer: { type: 'string', minLength: 1 },
        tokenTtlSec: { type: 'integer', minimum: 1, maximum: 7 * 24 * 3600 },
        tokenCacheSize: { type: 'integer', minimum: 0 },
        demoClient: { type: 'boolean' },
        tokenEndpoint: {
          type: 'object',
          additionalProperties: false,
          required: ['addressBurst', 'addressPerMinute', 'clientBurst', 'clientPerMinute', 'lockoutFailures', 'lockoutSec'],
          properties: {
            addressBurst: { type: 'integer', minimum: 1, maximum: 1_000_000 },
            addressPerMinute: { type: 'number', exclusiveMinimum: 0, maximum: 1_000_000 },
            clientBurst: { type: 'integer', minimum: 1, maximum: 1_000_000 },
            clientPerMinute: { type: 'number', exclusiveMinimum: 0, maximum: 1_000_000 },
            lockoutFailures: { type: 'integer', minimum: 1, maximum: 1_000_000 },
            lockoutSec: { type: 'integer', minimum: 1, maximum: 86_400 },
          },
        },
        external: {
          type: 'object',
          additionalProperties: false,
          required: ['issuer', 'audience', 'jwksUrl', 'environmentsClaim'],
          properties: {
            issuer: { type: 'string', minLength: 1 },
            audience: { type: 'string', minLength: 1 },
            jwksUrl: { type: 'string', pattern: '^https?://' },
            environmentsClaim: { type: 'string', minLength: 1 },
            outbound: OUTBOUND,
          },
        },
      },
    },
    ingest: {
      type: 'object',
      additionalProperties: false,
      required: ['feeds', 'imports'],
      properties: {
        feeds: {
          type: 'object',
          additionalProperties: false,
          required: ['timeoutMs', 'maxBodyBytes', 'retries', 'retryBaseMs', 'concurrency'],
          properties: {
            timeoutMs: { type: 'integer', minimum: 100 },
            maxBodyBytes: { type: 'integer', minimum: 1024, maximum: 1024 ** 3 },
            retries: { type: 'integer', minimum: 0, maximum: 10 },
            retryBaseMs: { type: 'integer', minimum: 0 },
            concurrency: { type: 'integer', minimum: 1, maximum: 64 },
          },
        },
        imports: {
          type: 'object',
          additionalProperties: false,
          required: ['maxUploadBytes', 'batchRows', 'scanIntervalMs', 'settleMs'],
          properties: {
            maxUploadBytes: { type: 'integer', minimum: 1024 },
            batchRows: { type: 'integer', minimum: 1, maximum: 100_000 },
            scanIntervalMs: { type: 'integer', minimum: 10 },
            settleMs: { type: 'integer', minimum: 0 },
          },
        },
      },
    },
    log: {
      type: 'object',
      additionalProperties: false,
      required: ['level', 'accessSampleRate'],
      properties: {
        level: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
        accessSampleRate: { type: 'number', minimum: 0, maximum: 1 },
      },
    },
    reports: {
      type: 'object',
      additionalProperties: false,
      required: ['maxRangeDays', 'maxHourRangeDays'],
      properties: {
        maxRangeDays: { type: 'integer', minimum: 1, maximum: 3660 },
        maxHourRangeDays: { type: 'integer', minimum: 1, maximum: 366 },
      },
    },
    environments: {
      type: 'object',
      minProperties: 1,
      propertyNames: NAME,
      additionalProperties: ENVIRONMENT,
    },
  },
} as const;

export const validateConfig = new Ajv({ allErrors: true }).compile(CONFIG_SCHEMA);
