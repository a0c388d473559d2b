/**
 * @module domain/item
 * The Item of SPEC.md as stored and served, and the pure rules that turn a validated request
 * body into it (the two documented shapes of `categories`). No I/O.
 */

export type AncestryLevel = 'group' | 'item' | 'model';

/** An image is a URL string or an object describing it (SPEC.md documents both). */
export type ItemImage = string | Record<string, string>;

/** `item_attributes` in either documented shape: `{name, value}` or a map of string to string. */
export type ItemAttributes = { name: string; value: Record<string, unknown> } | Record<string, string>;

/** Wire form of an item (snake_case as SPEC.md), with categories normalised to paths. */
export interface Item {
  environment: string;
  item_id: string;
  item_type: string;
  title?: string;
  description?: string;
  content_body?: string;
  uri?: string;
  categories?: string[][];
  tags?: string[];
  images?: ItemImage[];
  language?: string;
  item_attributes?: ItemAttributes;
  publication_datetime?: string;
  end_datetime?: string;
  access_type?: string;
  flags?: string[];
  parent?: string;
  ancestry_level?: AncestryLevel;
}

/** What the catalog keeps per item. */
export interface StoredItem {
  item: Item;
  enabled: boolean;
  /** Dense per-environment index used by the ranking kernel; stable for the item's lifetime. */
  ix: number;
  /** Unix ms of the last write. */
  updatedAt: number;
}

/** Nesting deeper than this in free-form values is refused: it serves no catalog purpose and
 * recursive encoders (msgpack, JSON.stringify) would overflow the stack on it. */
export const MAX_NESTING_DEPTH = 16;

/** Depth of a JSON value (scalars 0), walking iteratively so hostile input cannot overflow the stack. */
export function nestingDepth(value: unknown, stopAt = MAX_NESTING_DEPTH + 1): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    const d = depth + 1;
    if (d > deepest) deepest = d;
    if (deepest >= stopAt) return deepest;
    for (const child of Object.values(v)) stack.push([child, d]);
  }
  return deepest;
}

/** A list's information field of an item, as the recommendation response shows it. */
export function informationOf(item: Item, field: string): string | undefined {
  const value = (item as unknown as Record<string, unknown>)[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join(', ');
  return JSON.stringify(value);
}

/** An item timestamp as unix seconds for the u32 layouts (0 when absent; clamped to 0..2^32-1). */
export function unixSecOf(iso: string | undefined): number {
  return iso ? Math.max(0, Math.min(0xffffffff, Math.floor(Date.parse(iso) / 1000))) : 0;
}

/** Categories given as single-level strings or as paths become paths. */
export function toCategoryPaths(categories: ReadonlyArray<string | readonly string[]>): string[][] {
  const paths: string[][] = [];
  for (const c of categories) paths.push(typeof c === 'string' ? [c] : [...c]);
  return paths;
}
