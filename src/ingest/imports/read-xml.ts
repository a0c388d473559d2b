/**
 * @module ingest/imports/read-xml
 * Streams an XML file drop into rows: every child element of the root is one entry, its
 * attributes and child elements are the Item fields and `operation`:
 *
 *   <items>
 *     <item operation="ADD">
 *       <item_id>a-1</item_id><item_type>article</item_type><title>Hello</title>
 *       <tags><tag>x</tag><tag>y</tag></tags>
 *       <categories><category>news</category><category><level>news</level><level>world</level></category></categories>
 *       <images><image>https://…/1.jpg</image><image><url>https://…/2.jpg</url></image></images>
 *       <item_attributes><author>Ann</author></item_attributes>
 *     </item>
 *   </items>
 *
 * A list field's children are its values whatever their names; a category with children is a
 * path; an image with children is an object. A list field or item_attributes may instead hold
 * JSON text, as in CSV. A field given twice is a rejected row; a document that is not
 * well-formed fails the file at its line. Encoding: UTF-8 (BOM skipped).
 */
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { XmlEntryReader, XmlSyntaxError, type XmlValue } from '../xml-entries.ts';
import { ImportFileError, ROWS_PER_YIELD, type SourceRow } from './source-row.ts';

const LIST_FIELDS = new Set(['categories', 'tags', 'images', 'flags']);

function textOf(value: XmlValue): string | undefined {
  if (typeof value === 'string') return value;
  const text = value['#text'];
  return typeof text === 'string' ? text : undefined;
}

/** The values of an element's children, in order, whatever their names (attributes excluded). */
function childValues(value: XmlValue): XmlValue[] {
  if (typeof value === 'string') return [];
  const out: XmlValue[] = [];
  for (const [name, child] of Object.entries(value)) {
    if (name.startsWith('@') || name === '#text') continue;
    if (Array.isArray(child)) out.push(...child);
    else out.push(child);
  }
  return out;
}

/** A JSON text where a nested value may be written as in CSV. */
function jsonText(value: XmlValue): unknown {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (!(text.startsWith('[') || text.startsWith('{'))) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function listField(field: string, value: XmlValue): unknown {
  const json = jsonText(value);
  if (json !== undefined) return json;
  const children = childValues(value);
  if (children.length === 0) {
    const text = textOf(value);
    return text === undefined || text === '' ? [] : [text];
  }
  return children.map((child) => {
    if (typeof child === 'string') return child;
    if (field === 'categories') return childValues(child).map((c) => textOf(c) ?? '');
    if (field === 'images') {
      const image: Record<string, string> = {};
      for (const [k, v] of Object.entries(child)) {
        const text = Array.isArray(v) ? undefined : textOf(v);
        if (text !== undefined && k !== '#text') image[k.replace(/^@/, '')] = text;
      }
      return image;
    }
    return textOf(child) ?? child;
  });
}

function attributesField(value: XmlValue): unknown {
  const json = jsonText(value);
  if (json !== undefined) return json;
  if (typeof value === 'string') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === '#text') continue;
    out[k.replace(/^@/, '')] = Array.isArray(v) ? v : (textOf(v) ?? v);
  }
  return out;
}

/** One entry element → a row of Item fields. */
export function entryToRow(value: XmlValue, line: number, name: string): SourceRow {
  if (typeof value === 'string') return { line, error: `<${name}> has no fields (attributes or child elements)` };
  const fields: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === '#text') continue;
    const field = key.startsWith('@') ? key.slice(1) : key;
    if (Object.hasOwn(fields, field) || Array.isArray(child)) return { line, error: `field '${field}' is given more than once` };
    if (LIST_FIELDS.has(field)) fields[field] = listField(field, child);
    else if (field === 'item_attributes') fields[field] = attributesField(child);
    else fields[field] = typeof child === 'string' ? child : child;
  }
  return { line, fields };
}

/** Rows of an XML stream, in file order; throws ImportFileError where it cannot go on. */
export async function* readXml(input: Readable): AsyncGenerator<SourceRow[]> {
  const decoder = new StringDecoder('utf8');
  let rows: SourceRow[] = [];
  const reader = new XmlEntryReader(['*', '*'], (value, line, name) => rows.push(entryToRow(value, line, name)));
  let first = true;
  const run = (step: () => void) => {
    try {
      step();
    } catch (err) {
      if (err instanceof XmlSyntaxError) throw new ImportFileError(`XML: ${err.message}`, err.line);
      throw err;
    }
  };
  for await (const chunk of input) {
    let text = decoder.write(chunk as Buffer);
    if (first && text !== '') {
      // A BOM, and whitespace before the declaration (not well-formed, but common), are skipped.
      text = text.replace(/^\ufeff?\s*/, '');
      first = text === '';
    }
    try {
      run(() => reader.write(text));
    } catch (err) {
      if (rows.length > 0) yield rows;
      throw err;
    }
    if (rows.length >= ROWS_PER_YIELD) {
      yield rows;
      rows = [];
    }
  }
  try {
    run(() => {
      reader.write(decoder.end());
      reader.close();
    });
  } catch (err) {
    if (rows.length > 0) yield rows;
    throw err;
  }
  if (rows.length > 0) yield rows;
}
