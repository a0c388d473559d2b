/**
 * @module ingest/xml-entries
 * Streaming XML → plain values for the entries of a document: every element at `entryPath`
 * (element names from the root, `*` for any) is handed over as soon as it closes, as a plain
 * value; nothing outside entries is kept, so a file of millions of entries streams in bounded
 * memory. Values: an element with neither attributes nor child elements is its trimmed text;
 * otherwise an object with `@name` for attributes, child names as keys (repeated children become
 * an array) and `#text` for its own text. Names are kept as written (`media:content`); custom
 * DTD entities are never expanded (saxes knows only the XML ones), so no entity expansion attack
 * or external fetch can happen. Used by XML feeds and XML file drops.
 */
import { SaxesParser } from 'saxes';

export type XmlValue = string | XmlObject;
export interface XmlObject {
  [name: string]: XmlValue | XmlValue[];
}

/** A document that is not well-formed XML; `line` is 1-based. */
export class XmlSyntaxError extends Error {
  readonly line: number;
  constructor(message: string, line: number) {
    super(message);
    this.name = 'XmlSyntaxError';
    this.line = line;
  }
}

interface Building {
  name: string;
  attributes: Record<string, string>;
  children: Array<[string, XmlValue]>;
  text: string;
}

function toValue(b: Building): XmlValue {
  const attributeNames = Object.keys(b.attributes);
  if (attributeNames.length === 0 && b.children.length === 0) return b.text.trim();
  const out: XmlObject = {};
  for (const name of attributeNames) out[`@${name}`] = b.attributes[name]!;
  for (const [name, value] of b.children) {
    const seen = out[name];
    if (seen === undefined) out[name] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else out[name] = [seen, value];
  }
  const text = b.text.trim();
  if (text !== '') out['#text'] = text;
  return out;
}

/** Limits that keep one hostile entry from exhausting memory. */
const MAX_ENTRY_DEPTH = 32;
const MAX_ENTRY_CHARS = 16 * 1024 * 1024;

export class XmlEntryReader {
  readonly #parser = new SaxesParser({ position: true });
  readonly #path: readonly string[];
  readonly #onEntry: (value: XmlValue, line: number, name: string) => void;
  /** Element names from the root to the current element. */
  readonly #names: string[] = [];
  /** Elements being built: the current entry and its open descendants. */
  readonly #building: Building[] = [];
  #entryLine = 0;
  #entryChars = 0;
  #error: XmlSyntaxError | undefined;
  #rootName: string | undefined;
  #sawEntry = false;

  /**
   * @param entryPath element names from the root to an entry, e.g. ['catalog', 'product'] or ['*', '*']
   * @param onEntry called with each entry's value, the line its start tag is on, and its name
   */
  constructor(entryPath: readonly string[], onEntry: (value: XmlValue, line: number, name: string) => void) {
    this.#path = entryPath;
    this.#onEntry = onEntry;
    const p = this.#parser;
    p.on('error', (err) => {
      this.#error ??= new XmlSyntaxError(err.message, p.line);
      throw this.#error;
    });
    p.on('opentag', (tag) => this.#open(tag.name, tag.attributes as Record<string, string>));
    p.on('closetag', () => this.#close());
    p.on('text', (text) => this.#text(text));
    p.on('cdata', (text) => this.#text(text));
  }

  /** The root element's name, once its start tag has been read. */
  get rootName(): string | undefined {
    return this.#rootName;
  }

  /** Whether any element matched the entry path. */
  get sawEntry(): boolean {
    return this.#sawEntry;
  }

  #matches(): boolean {
    const names = this.#names;
    if (names.length !== this.#path.length) return false;
    for (let i = 0; i < names.length; i++) {
      const want = this.#path[i]!;
      if (want !== '*' && want !== names[i]) return false;
    }
    return true;
  }

  #open(name: string, attributes: Record<string, string>): void {
    this.#names.push(name);
    this.#rootName ??= name;
    if (this.#building.length === 0) {
      if (!this.#matches()) return;
      this.#sawEntry = true;
      this.#entryLine = this.#parser.line;
      this.#entryChars = 0;
    } else if (this.#building.length >= MAX_ENTRY_DEPTH) {
      this.#parser.fail(`an entry nests deeper than ${MAX_ENTRY_DEPTH} elements`);
    }
    this.#building.push({ name, attributes, children: [], text: '' });
  }

  #text(text: string): void {
    const current = this.#building[this.#building.length - 1];
    if (!current) return;
    this.#entryChars += text.length;
    if (this.#entryChars > MAX_ENTRY_CHARS) this.#parser.fail(`an entry is longer than ${MAX_ENTRY_CHARS} characters`);
    current.text += text;
  }

  #close(): void {
    this.#names.pop();
    const done = this.#building.pop();
    if (!done) return;
    const value = toValue(done);
    const parent = this.#building[this.#building.length - 1];
    if (parent) parent.children.push([done.name, value]);
    else this.#onEntry(value, this.#entryLine, done.name);
  }

  /** Parses the next chunk; throws XmlSyntaxError (also for any later call once one was thrown). */
  write(chunk: string): void {
    if (this.#error) throw this.#error;
    this.#parser.write(chunk);
  }

  /** Ends the document: throws XmlSyntaxError if it is incomplete or empty. */
  close(): void {
    if (this.#error) throw this.#error;
    if (this.#rootName === undefined) throw new XmlSyntaxError('the document has no root element', this.#parser.line);
    this.#parser.close();
  }
}
