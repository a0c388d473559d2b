// parseJson (domain/parse-json.ts) answers exactly what JSON.parse answers, value or SyntaxError, on
// hand-picked edge cases and on generated texts (fast-check), and keeps the strings it returns
// out of V8's string table, which JSON.parse does not for strings of up to 10 characters.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseJson } from '../../../src/domain/parse-json.ts';

/** JSON.parse's and parseJson's outcome for `text`: the value, or the error's class and message. */
function outcomes(text: string): [unknown, unknown] {
  const run = (parse: (t: string) => unknown) => {
    try {
      return { value: parse(text) };
    } catch (err) {
      return { error: `${(err as Error).name}: ${(err as Error).message}` };
    }
  };
  return [run(JSON.parse), run(parseJson)];
}

function assertSame(text: string): void {
  const [expected, actual] = outcomes(text);
  // deepStrictEqual tells -0 from 0 and checks prototypes and own properties (__proto__ included).
  assert.deepStrictEqual(actual, expected, `for ${JSON.stringify(text)}`);
}

test('the edge cases of the grammar: the same value or the same SyntaxError as JSON.parse', () => {
  const cases = [
    '{"a":"u1","b":[1,-0,2.5e3,-1.25E-2,0,1E+2,true,false,null,{},[]],"c":{"d":"\\u00e9\\n\\"x\\\\\\/\\b\\f\\r\\t"}}',
    ' \t\r\n[ 1 , 2 ] \n', '"x"', '0', '-0', '1e400', '-1e-400', '123456789012345678901234567890', '0.1', '{"0":1,"b":2,"1":3}',
    '{"a":1,"a":2}', '"é😀"', '"\\ud800"', '"\\uDC00\\uD800"', '{"__proto__":{"x":1}}', '{"constructor":1,"toString":2}',
    '01', '1.', '.5', '-', '+1', '1e', '1e+', '0x10', 'NaN', 'Infinity', '{"a":1,}', '[1,]', '[,1]', '{"a" 1}', '{a:1}', "{'a':1}",
    '"\\u12"', '"\\x41"', '"\\a"', '"tab\there"', '"\u0001"', '"unterminated', '{"a":', '[', '', ' ', 'tru', 'nulll', 'truex',
    '\uFEFF{}', '{}x', '[1] [2]', '"a"\u00a0', '\u2028[]',
  ];
  for (const text of cases) assertSame(text);
  // Past MAX_DEPTH (256): JSON.parse answers.
  const deep = 1000;
  assertSame('['.repeat(deep) + ']'.repeat(deep));
  assertSame('{"a":'.repeat(deep) + '1' + '}'.repeat(deep));
  assertSame('['.repeat(deep) + ']'.repeat(deep - 1));
});

test('keys remembered from earlier bodies (escaped or not) never let a malformed key through', () => {
  for (const earlier of ['{"x\\"y":1}', '{"x\\u0022y":1}', '{"a\\\\":1}', '{"ok":1,"x\\"y":2}', '{"x":1}']) {
    assertSame(earlier);
    for (const later of ['{"x"y":1}', '{"a\\":1}', '{"x":1}', '{"x\\"y":3}', '{"ok":1,"x"y":2}', '{"xy":1}', '{"x']) assertSame(later);
  }
});

test('__proto__ in a body is an own property, as JSON.parse makes it, never the prototype', () => {
  const parsed = parseJson('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(parsed), Object.prototype);
  assert.ok(Object.prototype.hasOwnProperty.call(parsed, '__proto__'));
  assert.equal((parsed as { polluted?: unknown }).polluted, undefined);
  assert.equal(({} as { polluted?: unknown }).polluted, undefined);
});

test('generated JSON values, written with any whitespace, parse to what JSON.parse gives', () => {
  const space = fc.constantFrom('', ' ', '\n', '\t', '\r\n ', '  ');
  fc.assert(
    fc.property(fc.jsonValue(), space, (value, pad) => {
      const text = JSON.stringify(value, null, pad.length > 0 ? pad : undefined);
      assertSame(`${pad}${text}${pad}`);
    }),
    { numRuns: 2000, seed: 20261127 },
  );
});

test('texts cut, spliced or made of any characters: the same value or error as JSON.parse', () => {
  fc.assert(
    fc.property(fc.json(), fc.nat(), fc.nat(), fc.string({ unit: 'grapheme-ascii', maxLength: 4 }), (text, a, b, inserted) => {
      const cut = a % (text.length + 1);
      const to = Math.min(text.length, cut + (b % 3));
      assertSame(text.slice(0, cut) + inserted + text.slice(to));
      assertSame(text.slice(0, cut));
    }),
    { numRuns: 3000, seed: 27112026 },
  );
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (text) => assertSame(text)), { numRuns: 2000, seed: 11 });
});

test('short string values stay out of the string table (JSON.parse internalizes them)', () => {
  // %IsInternalizedString needs --allow-natives-syntax, so a child process runs the check.
  const script = `
    const { parseJson } = await import(${JSON.stringify(new URL('../../../src/domain/parse-json.ts', import.meta.url).href)});
    const text = '{"user_id":"u12345","device_id":"d12345","lists":[{"list_name":"popular","x":"i9"}]}';
    const strings = (o) => typeof o === 'string' ? [o] : o && typeof o === 'object' ? Object.values(o).flatMap(strings) : [];
    const interned = (value) => strings(value).map((s) => eval('%IsInternalizedString(s)'));
    console.log(JSON.stringify({ jsonParse: interned(JSON.parse(text)), parseJson: interned(parseJson(text)) }));
  `;
  const run = spawnSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const { jsonParse, parseJson: ours } = JSON.parse(run.stdout) as { jsonParse: boolean[]; parseJson: boolean[] };
  assert.deepEqual(jsonParse, [true, true, true, true], 'JSON.parse internalizes values of up to 10 characters (what this module avoids)');
  assert.deepEqual(ours, [false, false, false, false]);
});
