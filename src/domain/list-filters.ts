/**
 * @module domain/list-filters
 * List filters (DESIGN.md: `categories`, `flags`, `language`, `item_type`, `access_type` and
 * configured `item_attributes` keys): their JSON Schema, shared by request validation and the
 * configuration, and the keys that connect items to filters. An item is indexed under one key
 * per value it has (every prefix of each category path, so a filter at any level matches); a
 * filter becomes, per field, the keys of which an item needs any one. Pure.
 */
import type { Item } from './item.ts';

/**
 * Filters on the filterable item fields (DESIGN.md): within a field any value matches, across
 * fields all must. A category path matches an item with a path that starts with it.
 */
export interface ListFilters {
  categories?: Array<string | string[]>;
  flags?: string[];
  language?: string | string[];
  access_type?: string | string[];
  item_type?: string | string[];
  /** Configured attribute keys (EnvironmentConfig.filterAttributes) → accepted value(s). */
  item_attributes?: Record<string, string | string[]>;
}

const VALUE = { type: 'string', minLength: 1, maxLength: 256 } as const;
const VALUES = { type: 'array', minItems: 1, maxItems: 100, items: VALUE } as const;
const ONE_OR_MANY = { anyOf: [VALUE, VALUES] } as const;

export const LIST_FILTERS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    categories: { type: 'array', minItems: 1, maxItems: 100, items: { anyOf: [VALUE, { type: 'array', minItems: 1, maxItems: 16, items: VALUE }] } },
    flags: VALUES,
    language: ONE_OR_MANY,
    access_type: ONE_OR_MANY,
    item_type: ONE_OR_MANY,
    item_attributes: { type: 'object', maxProperties: 32, additionalProperties: ONE_OR_MANY },
  },
} as const;

// Separators that cannot occur in validated values (control characters are refused in ids and
// labels are free text, so \u0001 and \u0002 are used rather than printable ones).
const PATH_SEP = '\u0001';
const KEY_SEP = '\u0002';

const categoryKey = (path: readonly string[], depth: number) => `c${KEY_SEP}${path.slice(0, depth).join(PATH_SEP)}`;
const flagKey = (flag: string) => `f${KEY_SEP}${flag}`;
const languageKey = (language: string) => `l${KEY_SEP}${language}`;
const accessKey = (access: string) => `a${KEY_SEP}${access}`;
const attributeKey = (name: string, value: string) => `x${KEY_SEP}${name}${KEY_SEP}${value}`;
/** Tags are not a filter field (DESIGN.md), but item-to-item finds content neighbours by them. */
export const TAG_KEY_PREFIX = `t${KEY_SEP}`;
export const CATEGORY_KEY_PREFIX = `c${KEY_SEP}`;
const tagKey = (tag: string) => `${TAG_KEY_PREFIX}${tag.toLowerCase()}`;

const many = (v: string | readonly string[] | undefined): readonly string[] => (v === undefined ? [] : typeof v === 'string' ? [v] : v);

/** The string-valued `item_attributes` of either documented shape. */
function attributesOf(item: Item): Record<string, unknown> {
  const attributes = item.item_attributes;
  if (!attributes) return {};
  if ('name' in attributes && 'value' in attributes && typeof attributes.value === 'object') return attributes.value as Record<string, unknown>;
  return attributes as Record<string, unknown>;
}

/** Every key the item is found under: its filter keys and its tags. */
export function filterKeysOf(item: Item, filterAttributes: readonly string[]): string[] {
  const keys = new Set<string>();
  for (const tag of item.tags ?? []) keys.add(tagKey(tag));
  for (const path of item.categories ?? []) for (let d = 1; d <= path.length; d++) keys.add(categoryKey(path, d));
  for (const flag of item.flags ?? []) keys.add(flagKey(flag));
  if (item.language) keys.add(languageKey(item.language));
  if (item.access_type) keys.add(accessKey(item.access_type));
  if (filterAttributes.length > 0) {
    const attributes = attributesOf(item);
    for (const name of filterAttributes) {
      const value = attributes[name];
      if (typeof value === 'string') keys.add(attributeKey(name, value));
    }
  }
  return [...keys];
}

/** The filter as clauses: an item passes when it has at least one key of every clause. */
export function filterClauses(filters: ListFilters): string[][] {
  const clauses: string[][] = [];
  if (filters.categories) {
    clauses.push(filters.categories.map((c) => (typeof c === 'string' ? categoryKey([c], 1) : categoryKey(c, c.length))));
  }
  if (filters.flags) clauses.push(filters.flags.map(flagKey));
  if (filters.language !== undefined) clauses.push(many(filters.language).map(languageKey));
  if (filters.access_type !== undefined) clauses.push(many(filters.access_type).map(accessKey));
  for (const [name, values] of Object.entries(filters.item_attributes ?? {})) clauses.push(many(values).map((v) => attributeKey(name, v)));
  return clauses;
}

/** Item types a filter admits, or undefined when it does not restrict types. */
export function filterItemTypes(filters: ListFilters): readonly string[] | undefined {
  return filters.item_type === undefined ? undefined : many(filters.item_type);
}

/** Problems of validated filters against an environment: unknown item types, attribute keys not configured. */
export function filterProblems(filters: ListFilters, itemTypes: readonly string[], filterAttributes: readonly string[]): Array<[field: string[], message: string]> {
  const problems: Array<[string[], string]> = [];
  for (const t of many(filters.item_type)) if (!itemTypes.includes(t)) problems.push([['item_type'], `'${t}' is not an item type of this environment`]);
  for (const name of Object.keys(filters.item_attributes ?? {})) {
    if (!filterAttributes.includes(name)) problems.push([['item_attributes', name], 'is not a filterable attribute (configure it in filterAttributes)']);
  }
  return problems;
}
