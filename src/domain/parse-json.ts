/**
 * @module domain/parse-json
 * JSON.parse's result for a request body, with its strings kept out of V8's string table.
 *
 * V8's JSON.parse internalizes every string value of 10 characters or fewer (the user, device and
 * item ids of most requests): each goes straight to old space and into the isolate's string table,
 * and every mark-compact sweeps the whole table. At ~11,000 recommendation requests/s the main
 * thread gathered ~100,000 dead entries between two mark-compacts: 1–2 ms of their 4–5 ms
 * atomic pause (`--trace-gc-nvp` `clear`), the part that pushed some over issue 11's 5 ms. Here
 * every string is a slice of the body's text: young, and collected by the scavenger. A key is the
 * string last met at its position in an object when it matches (Parser.#key), else a slice;
 * setting it as a property looks it up in the table, as JSON.parse's keys are.
 *
 * It answers only what it is sure of: any input it does not take (a syntax error, nesting past
 * MAX_DEPTH) goes to JSON.parse, whose value or SyntaxError is then the answer, so the two agree
 * on every input (test/unit/domain/parse-json.test.ts compares them).
 */

/** Deeper input goes to JSON.parse (which nests without recursion): no stack overflow here. */
const MAX_DEPTH = 256;

/** The key last met at each position in an object (Parser.#key), for the first KEY_ORDINALS positions. */
const KEY_ORDINALS = 32;
const lastKeys: Array<string | undefined> = new Array<string | undefined>(KEY_ORDINALS);

/** Thrown inside the parser only: the input goes to JSON.parse. */
const NOT_MINE = Symbol('not parsed here');

const enum Char {
  Tab = 9,
  Newline = 10,
  Return = 13,
  Space = 32,
  Quote = 34,
  Plus = 43,
  Comma = 44,
  Minus = 45,
  Dot = 46,
  Slash = 47,
  Zero = 48,
  Nine = 57,
  Colon = 58,
  UpperE = 69,
  OpenBracket = 91,
  Backslash = 92,
  CloseBracket = 93,
  LowerB = 98,
  LowerE = 101,
  LowerF = 102,
  LowerN = 110,
  LowerR = 114,
  LowerT = 116,
  LowerU = 117,
  OpenBrace = 123,
  CloseBrace = 125,
}

/** What each single-character escape stands for. */
const ESCAPED: Record<number, string> = {
  [Char.Quote]: '"',
  [Char.Backslash]: '\\',
  [Char.Slash]: '/',
  [Char.LowerB]: '\b',
  [Char.LowerF]: '\f',
  [Char.LowerN]: '\n',
  [Char.LowerR]: '\r',
  [Char.LowerT]: '\t',
};

class Parser {
  readonly #text: string;
  #at = 0;

  constructor(text: string) {
    this.#text = text;
  }

  parseWhole(): unknown {
    const value = this.#value(0);
    this.#skipSpace();
    if (this.#at !== this.#text.length) throw NOT_MINE;
    return value;
  }

  #skipSpace(): void {
    const text = this.#text;
    let at = this.#at;
    for (;;) {
      const c = text.charCodeAt(at);
      if (c !== Char.Space && c !== Char.Newline && c !== Char.Return && c !== Char.Tab) break;
      at++;
    }
    this.#at = at;
  }

  #value(depth: number): unknown {
    this.#skipSpace();
    const c = this.#text.charCodeAt(this.#at);
    if (c === Char.Quote) return this.#string();
    if (c === Char.OpenBrace) return this.#object(depth + 1);
    if (c === Char.OpenBracket) return this.#array(depth + 1);
    if (c === Char.Minus || (c >= Char.Zero && c <= Char.Nine)) return this.#number();
    if (this.#text.startsWith('true', this.#at)) return this.#word(4, true);
    if (this.#text.startsWith('false', this.#at)) return this.#word(5, false);
    if (this.#text.startsWith('null', this.#at)) return this.#word(4, null);
    throw NOT_MINE;
  }

  #word<T>(length: number, value: T): T {
    this.#at += length;
    return value;
  }

  #object(depth: number): Record<string, unknown> {
    if (depth > MAX_DEPTH) throw NOT_MINE;
    const text = this.#text;
    const object: Record<string, unknown> = {};
    this.#at++;
    this.#skipSpace();
    if (text.charCodeAt(this.#at) === Char.CloseBrace) {
      this.#at++;
      return object;
    }
    for (let ordinal = 0; ; ordinal++) {
      this.#skipSpace();
      if (text.charCodeAt(this.#at) !== Char.Quote) throw NOT_MINE;
      const key = this.#key(ordinal);
      this.#skipSpace();
      if (text.charCodeAt(this.#at) !== Char.Colon) throw NOT_MINE;
      this.#at++;
      const value = this.#value(depth);
      // JSON.parse makes `__proto__` an own property; an assignment would set the prototype.
      if (key === '__proto__') Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
      else object[key] = value;
      this.#skipSpace();
      const next = text.charCodeAt(this.#at++);
      if (next === Char.CloseBrace) return object;
      if (next !== Char.Comma) throw NOT_MINE;
    }
  }

  #array(depth: number): unknown[] {
    if (depth > MAX_DEPTH) throw NOT_MINE;
    const text = this.#text;
    const array: unknown[] = [];
    this.#at++;
    this.#skipSpace();
    if (text.charCodeAt(this.#at) === Char.CloseBracket) {
      this.#at++;
      return array;
    }
    for (;;) {
      array.push(this.#value(depth));
      this.#skipSpace();
      const next = text.charCodeAt(this.#at++);
      if (next === Char.CloseBracket) return array;
      if (next !== Char.Comma) throw NOT_MINE;
    }
  }

  /** RFC 8259's number grammar, checked here; Number() then reads it as JSON.parse does. */
  #number(): number {
    const text = this.#text;
    const start = this.#at;
    let at = start;
    if (text.charCodeAt(at) === Char.Minus) at++;
    const first = text.charCodeAt(at);
    if (first === Char.Zero) at++;
    else if (first > Char.Zero && first <= Char.Nine) at = this.#digits(at);
    else throw NOT_MINE;
    if (text.charCodeAt(at) === Char.Dot) {
      const fraction = at + 1;
      at = this.#digits(fraction);
      if (at === fraction) throw NOT_MINE;
    }
    const e = text.charCodeAt(at);
    if (e === Char.LowerE || e === Char.UpperE) {
      at++;
      const sign = text.charCodeAt(at);
      if (sign === Char.Plus || sign === Char.Minus) at++;
      const exponent = at;
      at = this.#digits(exponent);
      if (at === exponent) throw NOT_MINE;
    }
    this.#at = at;
    return Number(text.slice(start, at));
  }

  #digits(at: number): number {
    const text = this.#text;
    for (;;) {
      const c = text.charCodeAt(at);
      // Written so that NaN (past the end) stops too.
      if (!(c >= Char.Zero && c <= Char.Nine)) return at;
      at++;
    }
  }

  /**
   * The key at the quote under #at, the `ordinal`th of its object. The objects of a body mostly
   * repeat their keys in the same order (every event of a batch), so the key last met at this
   * ordinal is tried first and, when it matches, used again: a new slice per key made each
   * property store look its name up in V8's string table.
   */
  #key(ordinal: number): string {
    const text = this.#text;
    const start = this.#at + 1;
    const known = ordinal < KEY_ORDINALS ? lastKeys[ordinal] : undefined;
    if (known !== undefined && text.charCodeAt(start + known.length) === Char.Quote && text.startsWith(known, start)) {
      this.#at = start + known.length + 1;
      return known;
    }
    const key = this.#string();
    // Only a key written without escapes (as long as its text): a remembered key then has no
    // quote, backslash or control character, so matching it and a quote is matching its text.
    if (ordinal < KEY_ORDINALS && key.length === this.#at - start - 1) lastKeys[ordinal] = key;
    return key;
  }

  /** The string starting at the quote under #at: a slice of the text, pieced together only around escapes. */
  #string(): string {
    const text = this.#text;
    let at = this.#at + 1;
    let runStart = at;
    let pieces: string | undefined;
    for (;;) {
      const c = text.charCodeAt(at);
      // NaN past the end: unterminated.
      if (c !== c || c < Char.Space) throw NOT_MINE;
      if (c === Char.Quote) {
        const run = text.slice(runStart, at);
        this.#at = at + 1;
        return pieces === undefined ? run : pieces + run;
      }
      if (c !== Char.Backslash) {
        at++;
        continue;
      }
      pieces = (pieces ?? '') + text.slice(runStart, at);
      const escape = text.charCodeAt(at + 1);
      if (escape === Char.LowerU) {
        const hex = text.slice(at + 2, at + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw NOT_MINE;
        pieces += String.fromCharCode(parseInt(hex, 16));
        at += 6;
      } else {
        const char = ESCAPED[escape];
        if (char === undefined) throw NOT_MINE;
        pieces += char;
        at += 2;
      }
      runStart = at;
    }
  }
}

/** JSON.parse(text), with no string of the result internalized (see the module header). */
export function parseJson(text: string): unknown {
  try {
    return new Parser(text).parseWhole();
  } catch (err) {
    if (err !== NOT_MINE) throw err;
    return JSON.parse(text);
  }
}
