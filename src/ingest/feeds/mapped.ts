/**
 * @module ingest/feeds/mapped
 * JSON, XML and CSV feeds → Item candidates through the feed's field mapping (source path →
 * Item field). Entries are found at `items_path` (JSON: a dot path to an array, default the top
 * level or a JSON Feed's `items`; XML: element names from the root, e.g. `catalog.product`);
 * CSV entries are the rows under a header. A source path is dot-separated; arrays on the way are
 * walked into, so `tags.tag` collects every tag; XML attributes are `@name`. Values are coerced
 * to the target field: text for scalar fields, lists for tags/flags/categories/images (a CSV
 * cell holding a JSON array is read as one), timestamps from RFC 3339, RFC 822 or unix time.
 * Empty values count as absent.
 */
import { parse as parseCsv } from 'csv-parse/sync';
import type { DisableMarker, FeedDefinition } from '../../domain/feed.ts';
import { asText, toTimestamp, type Candidate } from '../normalize.ts';
import { XmlEntryReader, XmlSyntaxError, type XmlValue } from '../xml-entries.ts';
import { FeedParseError, type ParsedEntry, type ParsedFeed } from './parsed-feed.ts';

const LIST_FIELDS = new Set(['tags', 'flags']);
const TIME_FIELDS = new Set(['publication_datetime', 'end_datetime']);

/** Every value at `path` in `root`, walking into arrays. */
function valuesAt(root: unknown, path: string): unknown[] {
  let current: unknown[] = [root];
  for (const segment of path.split('.')) {
    const next: unknown[] = [];
    for (const node of current) {
      for (const item of Array.isArray(node) ? node : [node]) {
        if (item === null || typeof item !== 'object' || Array.isArray(item)) continue;
        if (!Object.hasOwn(item, segment)) continue;
        const value = (item as Record<string, unknown>)[segment];
        if (value !== undefined && value !== null) next.push(value);
      }
    }
    current = next;
  }
  return current.flatMap((v) => (Array.isArray(v) ? v : [v])).filter((v) => v !== null && v !== undefined);
}

/** Text of a scalar, or of an XML element's `#text`. */
function textOf(value: unknown): string | undefined {
  const text = asText(value);
  if (text !== undefined) return text.trim();
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return asText((value as Record<string, unknown>)['#text'])?.trim();
  return undefined;
}

/** A CSV cell or XML text holding a JSON array/object is read as that JSON. */
function expandJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (!(text.startsWith('[') || text.startsWith('{'))) return value;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return value;
  }
}

/** Values with JSON-text cells expanded: a cell holding a JSON array gives its elements. */
function expandAll(values: unknown[]): unknown[] {
  return values.flatMap((v) => {
    if (typeof v !== 'string') return [v];
    const expanded = expandJson(v);
    return Array.isArray(expanded) ? expanded : [expanded];
  });
}

/** An image: a URL string, or an object of strings (XML attributes lose their `@`). */
function imageOf(value: unknown): string | Record<string, string> | undefined {
  const text = textOf(value);
  if (text !== undefined) return text === '' ? undefined : text;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    const t = textOf(v);
    if (t !== undefined && k !== '#text') out[k.replace(/^@/, '')] = t;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Writes one mapped value into the candidate; returns a reason when the value cannot fit. */
function assign(candidate: Candidate, target: string, values: unknown[]): string | undefined {
  if (target.startsWith('item_attributes.')) {
    const text = values.map(textOf).filter((t): t is string => t !== undefined && t !== '');
    if (text.length === 0) return undefined;
    const attributes = (candidate.item_attributes ??= {}) as Record<string, string>;
    attributes[target.slice('item_attributes.'.length)] = text.join(', ');
    return undefined;
  }
  if (target === 'item_attributes') {
    const value = expandJson(values[0]);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'item_attributes: the source value is not an object';
    const attributes = (candidate.item_attributes ??= {}) as Record<string, string>;
    for (const [k, v] of Object.entries(value)) {
      const t = textOf(v);
      if (t !== undefined) attributes[k.replace(/^@/, '')] = t;
    }
    return undefined;
  }
  if (LIST_FIELDS.has(target)) {
    const list = expandAll(values).map(textOf).filter((t): t is string => t !== undefined && t !== '');
    if (list.length > 0) candidate[target] = [...((candidate[target] as string[] | undefined) ?? []), ...list];
    return undefined;
  }
  if (target === 'categories') {
    const paths: Array<string | string[]> = [];
    for (const v of expandAll(values)) {
      if (Array.isArray(v)) {
        const path = v.map(textOf).filter((t): t is string => t !== undefined && t !== '');
        if (path.length > 0) paths.push(path);
      } else {
        const t = textOf(v);
        if (t) paths.push(t);
      }
    }
    if (paths.length > 0) candidate.categories = [...((candidate.categories as unknown[] | undefined) ?? []), ...paths];
    return undefined;
  }
  if (target === 'images') {
    const images = expandAll(values).map(imageOf).filter((i) => i !== undefined);
    if (images.length > 0) candidate.images = [...((candidate.images as unknown[] | undefined) ?? []), ...images];
    return undefined;
  }
  const first = values[0];
  if (TIME_FIELDS.has(target)) {
    const raw = typeof first === 'number' ? first : textOf(first);
    if (raw === undefined || raw === '') return undefined;
    const time = toTimestamp(raw);
    if ('reason' in time) return `${target}: ${time.reason}`;
    candidate[target] = time.iso;
    return undefined;
  }
  const text = textOf(first);
  if (text === undefined) return `${target}: the source value is not text`;
  if (text !== '') candidate[target] = text;
  return undefined;
}

function markerSet(record: unknown, marker: DisableMarker | undefined): boolean {
  if (!marker) return false;
  return valuesAt(record, marker.field).some((v) => textOf(v) === marker.value);
}

/** Maps one source record to an entry. */
function toEntry(record: unknown, index: number, def: FeedDefinition): ParsedEntry {
  const candidate: Candidate = {};
  for (const [source, target] of Object.entries(def.mapping ?? {})) {
    const values = valuesAt(record, source);
    if (values.length === 0) continue;
    const reason = assign(candidate, target, values);
    if (reason) return { entry: index, ...(typeof candidate.item_id === 'string' ? { itemId: candidate.item_id } : {}), reason };
  }
  if (typeof candidate.item_id !== 'string') {
    const source = Object.entries(def.mapping ?? {}).find(([, target]) => target === 'item_id')?.[0];
    return { entry: index, reason: `has no value at '${source}' (mapped to item_id)` };
  }
  return { entry: index, candidate, disabled: markerSet(record, def.disableMarker) };
}

function parseJsonFeed(text: string, def: FeedDefinition): ParsedFeed {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new FeedParseError(`not valid JSON: ${(err as Error).message}`);
  }
  let records: unknown;
  if (def.itemsPath !== undefined) {
    let node: unknown = doc;
    for (const key of def.itemsPath.split('.')) {
      const isObject = node !== null && typeof node === 'object' && !Array.isArray(node);
      node = isObject && Object.hasOwn(node as object, key) ? (node as Record<string, unknown>)[key] : undefined;
    }
    if (!Array.isArray(node)) throw new FeedParseError(`items_path '${def.itemsPath}' is not an array in the document`);
    records = node;
  } else if (Array.isArray(doc)) {
    records = doc;
  } else if (doc !== null && typeof doc === 'object' && Array.isArray((doc as Record<string, unknown>).items)) {
    records = (doc as Record<string, unknown>).items; // JSON Feed (jsonfeed.org) and similar envelopes
  } else {
    throw new FeedParseError('the document is not an array of entries (set items_path to where they are)');
  }
  return { detectedFormat: 'json', warnings: [], entries: (records as unknown[]).map((r, i) => toEntry(r, i + 1, def)) };
}

function parseXmlFeed(text: string, def: FeedDefinition): ParsedFeed {
  const records: XmlValue[] = [];
  const reader = new XmlEntryReader((def.itemsPath ?? '').split('.'), (value) => records.push(value));
  try {
    reader.write(text.trimStart());
    reader.close();
  } catch (err) {
    if (err instanceof XmlSyntaxError) throw new FeedParseError(`not well-formed XML: ${err.message}`);
    throw err;
  }
  const warnings = reader.sawEntry ? [] : [`no element at items_path '${def.itemsPath}' (the root is <${reader.rootName}>)`];
  return { detectedFormat: 'xml', warnings, entries: records.map((r, i) => toEntry(r, i + 1, def)) };
}

function parseCsvFeed(text: string, def: FeedDefinition): ParsedFeed {
  let rows: string[][];
  try {
    rows = parseCsv(text, { delimiter: def.delimiter ?? ',', bom: true, relax_column_count: true, skip_empty_lines: true }) as string[][];
  } catch (err) {
    throw new FeedParseError(`not readable CSV: ${(err as Error).message}`);
  }
  const [header, ...data] = rows;
  if (!header) return { detectedFormat: 'csv', warnings: ['the document is empty'], entries: [] };
  const columns = header.map((c) => c.trim());
  const missing = Object.keys(def.mapping ?? {}).filter((source) => !columns.includes(source.split('.')[0]!));
  const warnings = missing.length > 0 ? [`mapped column(s) not in the header: ${missing.join(', ')}`] : [];
  const entries = data.map((row, i): ParsedEntry => {
    if (row.length !== columns.length) return { entry: i + 1, reason: `has ${row.length} fields, the header has ${columns.length}` };
    const record: Record<string, string> = {};
    for (let c = 0; c < columns.length; c++) record[columns[c]!] = row[c]!;
    return toEntry(record, i + 1, def);
  });
  return { detectedFormat: 'csv', warnings, entries };
}

/** Parses a mapped-format body; throws FeedParseError when it is not one. */
export function parseMapped(text: string, def: FeedDefinition): ParsedFeed {
  if (def.format === 'json') return parseJsonFeed(text, def);
  if (def.format === 'xml') return parseXmlFeed(text, def);
  return parseCsvFeed(text, def);
}
