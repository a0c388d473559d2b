/**
 * @module domain/item-schema
 * Compiled JSON Schema of the Item request body, and the codec from a validated body to the
 * domain Item. Unknown fields are rejected (415) rather than ignored: a misspelt field would
 * otherwise be lost without the integrator ever knowing (documented in README.md).
 */
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { FieldError } from './errors.ts';
import { ajvFieldErrors, pointer, type AjvWording } from './field-errors.ts';
import { MAX_NESTING_DEPTH, nestingDepth, toCategoryPaths, type Item } from './item.ts';

/** Identifiers end up in LMDB keys (at most 1978 bytes), so they are kept short. */
export const MAX_ID_LENGTH = 256;
const ID = { type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH, pattern: '^[^\\u0000-\\u001f\\u007f]+$' } as const;
const LABEL = { type: 'string', minLength: 1, maxLength: 256 } as const;
const LABELS = { type: 'array', maxItems: 100, items: LABEL } as const;
const TIMESTAMP = { type: 'string', format: 'date-time', maxLength: 64 } as const;

/** The Item body schema (also the fuzz test's starting point). */
export const ITEM_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['environment', 'item_id', 'item_type'],
  properties: {
    environment: ID,
    item_id: ID,
    item_type: ID,
    title: { type: 'string', maxLength: 2048 },
    description: { type: 'string', maxLength: 65536 },
    // Bounded only by the request body limit: it is the full text the algorithms read.
    content_body: { type: 'string' },
    uri: { type: 'string', maxLength: 8192 },
    categories: {
      type: 'array',
      maxItems: 200,
      items: { anyOf: [LABEL, { type: 'array', minItems: 1, maxItems: 16, items: LABEL }] },
    },
    tags: LABELS,
    images: {
      type: 'array',
      maxItems: 50,
      items: {
        anyOf: [
          { type: 'string', minLength: 1, maxLength: 8192 },
          { type: 'object', maxProperties: 16, additionalProperties: { type: 'string', maxLength: 8192 } },
        ],
      },
    },
    language: { type: 'string', minLength: 1, maxLength: 35 },
    item_attributes: {
      anyOf: [
        {
          type: 'object',
          additionalProperties: false,
          required: ['name', 'value'],
          properties: { name: LABEL, value: { type: 'object' } },
        },
        {
          type: 'object',
          maxProperties: 200,
          propertyNames: { maxLength: 256 },
          additionalProperties: { type: 'string', maxLength: 65536 },
        },
      ],
    },
    publication_datetime: TIMESTAMP,
    end_datetime: TIMESTAMP,
    access_type: LABEL,
    flags: LABELS,
    parent: ID,
    ancestry_level: { enum: ['group', 'item', 'model'] },
  },
} as const;

const ajv = new Ajv({ allErrors: true, strict: true });
addFormats.default(ajv, ['date-time']);
const validateItemBody = ajv.compile(ITEM_SCHEMA);

const ITEM_WORDING: AjvWording = {
  notAField: (e) => (e.instancePath === '' ? 'is not a field of Item' : 'is not an allowed field'),
  noShape: 'does not match any documented shape',
  format: 'must be an ISO 8601 timestamp with a timezone offset or Z',
};

/**
 * Whether `text` holds an unpaired UTF-16 surrogate. String.prototype.isWellFormed (Node 20,
 * not yet in TypeScript's ES2023 lib) is a native scan; the regex /\p{Cs}/u it replaced was a
 * tenth of a PUT's validation.
 */
const hasLoneSurrogate = (text: string) => !(text as string & { isWellFormed(): boolean }).isWellFormed();

/**
 * The first place where `body` holds what the store would not give back as sent: a `__proto__`
 * key (msgpackr renames it `__proto_` on read) or an unpaired surrogate (UTF-8 cannot carry it;
 * it reads back as U+FFFD). Iterative; call after the nesting check. Undefined when none.
 */
function unstorable(body: unknown): FieldError | undefined {
  // A path is only built for a value that is an object or at fault (a string per field and a
  // tuple per value was most of a file row's validation); the visiting order is unchanged.
  const values: unknown[] = [body];
  const parents: Array<string | undefined> = [undefined];
  const keys: string[] = [''];
  while (values.length > 0) {
    const value = values.pop();
    const parent = parents.pop();
    const key = keys.pop()!;
    const isString = typeof value === 'string';
    if (isString ? !hasLoneSurrogate(value) : typeof value !== 'object' || value === null) continue;
    const path = parent === undefined ? '' : parent + pointer(key);
    if (isString) return { path, message: 'must not contain an unpaired UTF-16 surrogate' };
    const object = value as Record<string, unknown>;
    for (const childKey of Object.keys(object)) {
      if (childKey === '__proto__') return { path: path + pointer(childKey), message: 'is a reserved name that cannot be stored' };
      if (hasLoneSurrogate(childKey)) return { path, message: 'must not have a key with an unpaired UTF-16 surrogate' };
      values.push(object[childKey]);
      parents.push(path);
      keys.push(childKey);
    }
  }
  return undefined;
}

/** Checks `body` against the Item schema; returns the Item or the failing fields. */
export function parseItemBody(body: unknown): { item: Item } | { errors: FieldError[] } {
  if (!validateItemBody(body)) return { errors: ajvFieldErrors(validateItemBody.errors ?? [], ITEM_WORDING) };
  const attributes = (body as { item_attributes?: unknown }).item_attributes;
  if (attributes !== undefined && nestingDepth(attributes) > MAX_NESTING_DEPTH) {
    return { errors: [{ path: '/item_attributes', message: `must not nest deeper than ${MAX_NESTING_DEPTH} levels` }] };
  }
  const notStorable = unstorable(body);
  if (notStorable) return { errors: [notStorable] };
  const raw = body as Omit<Item, 'categories'> & { categories?: Array<string | string[]> };
  const item: Item = { ...raw, categories: raw.categories && toCategoryPaths(raw.categories) };
  if (item.categories === undefined) delete item.categories;
  return { item };
}
