/**
 * @module config/schema
 * JSON Schema of the merged configuration, compiled once. Unknown keys are rejected so a
 * misspelt key is reported instead of silently ignored.
 */
import { Ajv } from 'ajv';

const NAME = { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' } as const;
const STRATEGY = { enum: ['personalized', 'item_to_item', 'trending', 'popular', 'latest'] } as const;
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
    filters: { type: 'object' }, // checked by the same validator as a request's filters (config/load.ts)
  },
} as const;

const MODEL = {
  type: 'object',
  additionalProperties: false,
  required: ['eventWeights', 'historyLength', 'cooccurrenceWindow', 'maxNeighbours', 'attributionWindowSec'],
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
  },
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
  },
} as const;

const CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['server', 'recommend', 'store', 'auth', 'log', 'environments'],
  properties: {
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
      required: ['host', 'port', 'maxBodyBytes', 'shutdownTimeoutMs'],
      properties: {
        host: { type: 'string', minLength: 1 },
        port: { type: 'integer', minimum: 0, maximum: 65535 },
        maxBodyBytes: { type: 'integer', minimum: 1024, maximum: 1024 ** 3 },
        shutdownTimeoutMs: { type: 'integer', minimum: 0 },
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
      required: ['issuer', 'tokenTtlSec', 'tokenCacheSize', 'demoClient'],
      properties: {
        issuer: { type: 'string', minLength: 1 },
        tokenTtlSec: { type: 'integer', minimum: 1, maximum: 7 * 24 * 3600 },
        tokenCacheSize: { type: 'integer', minimum: 0 },
        demoClient: { type: 'boolean' },
        external: {
          type: 'object',
          additionalProperties: false,
          required: ['issuer', 'audience', 'jwksUrl', 'environmentsClaim'],
          properties: {
            issuer: { type: 'string', minLength: 1 },
            audience: { type: 'string', minLength: 1 },
            jwksUrl: { type: 'string', pattern: '^https?://' },
            environmentsClaim: { type: 'string', minLength: 1 },
          },
        },
      },
    },
    log: {
      type: 'object',
      additionalProperties: false,
      required: ['level'],
      properties: { level: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] } },
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
