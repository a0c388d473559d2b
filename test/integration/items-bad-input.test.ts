// Every bad input to the Items API against the real server: the status SPEC.md/DESIGN.md give,
// an RFC 9457 problem body naming what is wrong, and a store that is byte for byte unchanged.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getToken } from '../helpers/auth.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { snapshotStore, assertSameStore } from '../helpers/store-snapshot.ts';
import { assertProblem, type Problem } from '../helpers/problem.ts';



type ExpectedErrors = Array<[path: string, message?: RegExp]>;

/** Each expected path is present with a matching message, and no other path is. */
function assertFieldErrors(problem: Problem, expected: ExpectedErrors): void {
  const errors = problem.errors ?? [];
  const paths = errors.map((e) => e.path);
  for (const [path, message] of expected) {
    const entry = errors.find((e) => e.path === path && (message === undefined || message.test(e.message)));
    assert.ok(entry, `an error for path '${path}'${message ? ` matching ${message}` : ''} in ${JSON.stringify(errors)}`);
  }
  assert.deepEqual([...paths].sort(), expected.map(([p]) => p).sort());
}

function nestedObject(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

const ENV = 'demo';
const ITEM = `/api/${ENV}/items/article/seed-1`;
const NEW = `/api/${ENV}/items/article/new-1`;
const WEBHOOK = `/api/${ENV}/items/article`;
const LIST = `/api/${ENV}/items/article`;
const SEED = {
  environment: ENV,
  item_id: 'seed-1',
  item_type: 'article',
  title: 'Seed',
  categories: [['news', 'world']],
  tags: ['t1'],
  item_attributes: { author: 'Ann' },
  publication_datetime: '2024-05-01T10:00:00+02:00',
};
const FRESH = { environment: ENV, item_id: 'new-1', item_type: 'article' };
const json = (v: unknown) => JSON.stringify(v);
const fresh = (extra: Record<string, unknown>) => json({ ...FRESH, ...extra });
const withoutKey = (key: string) => json(Object.fromEntries(Object.entries(FRESH).filter(([k]) => k !== key)));
const LONG_ID = 'x'.repeat(5000);

interface BadInput {
  name: string;
  method: 'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH';
  path: string;
  body?: string | Uint8Array;
  status: number;
  /** Problem type suffix, the error kind in kebab-case. */
  kind: string;
  /** Field errors expected; when absent the problem must carry no `errors`. */
  errors?: ExpectedErrors;
  /** Methods the `Allow` header of a 405 must list. */
  allow?: string[];
}

const NOT_JSON: BadInput[] = [
  { name: 'PUT item with non-JSON body answers 422 and stores nothing', method: 'PUT', path: ITEM, body: '{nope', status: 422, kind: 'body-not-json' },
  { name: 'PUT new item with truncated JSON answers 422 and stores nothing', method: 'PUT', path: NEW, body: json(FRESH).slice(0, -1), status: 422, kind: 'body-not-json' },
  { name: 'PUT item with JSON followed by garbage answers 422 and stores nothing', method: 'PUT', path: ITEM, body: `${json(SEED)}x`, status: 422, kind: 'body-not-json' },
  { name: 'PUT item with single-quoted, trailing-comma pseudo-JSON answers 422 and stores nothing', method: 'PUT', path: NEW, body: "{'environment': 'demo', 'item_id': 'new-1', 'item_type': 'article',}", status: 422, kind: 'body-not-json' },
  { name: 'PUT item with a form-encoded body answers 422 and stores nothing', method: 'PUT', path: NEW, body: 'environment=demo&item_id=new-1&item_type=article', status: 422, kind: 'body-not-json' },
  { name: 'PUT item with bytes that are not UTF-8 answers 422 and stores nothing', method: 'PUT', path: NEW, body: new Uint8Array([0xff, 0xfe, 0x00, 0x7b]), status: 422, kind: 'body-not-json' },
  { name: 'POST item with non-JSON body answers 422 and stores nothing', method: 'POST', path: WEBHOOK, body: '{nope', status: 422, kind: 'body-not-json' },
  { name: 'POST item without a body answers 400 and stores nothing', method: 'POST', path: WEBHOOK, status: 400, kind: 'body-required' },
  { name: 'POST item with an empty body answers 400 and stores nothing', method: 'POST', path: WEBHOOK, body: '', status: 400, kind: 'body-required' },
];

const WRONG_SHAPE: BadInput[] = [
  { name: 'PUT item with an array body answers 415 naming the body and stores nothing', method: 'PUT', path: NEW, body: '[]', status: 415, kind: 'invalid-item', errors: [['', /object/]] },
  { name: 'PUT item with the item wrapped in an array answers 415 and stores nothing', method: 'PUT', path: NEW, body: json([FRESH]), status: 415, kind: 'invalid-item', errors: [['', /object/]] },
  { name: 'PUT item with a string body answers 415 and stores nothing', method: 'PUT', path: NEW, body: '"new-1"', status: 415, kind: 'invalid-item', errors: [['', /object/]] },
  { name: 'PUT item with a number body answers 415 and stores nothing', method: 'PUT', path: NEW, body: '42', status: 415, kind: 'invalid-item', errors: [['', /object/]] },
  { name: 'PUT item with a null body answers 415 and stores nothing', method: 'PUT', path: ITEM, body: 'null', status: 415, kind: 'invalid-item', errors: [['', /object/]] },
  { name: 'PUT item with a boolean body answers 415 and stores nothing', method: 'PUT', path: NEW, body: 'true', status: 415, kind: 'invalid-item', errors: [['', /object/]] },
  { name: 'PUT item with a numeric title answers 415 naming title and stores nothing', method: 'PUT', path: NEW, body: fresh({ title: 42 }), status: 415, kind: 'invalid-item', errors: [['/title', /string/]] },
  { name: 'PUT update with a numeric title answers 415 and leaves the item unchanged', method: 'PUT', path: ITEM, body: json({ ...SEED, title: 42 }), status: 415, kind: 'invalid-item', errors: [['/title', /string/]] },
  { name: 'PUT item with an object description answers 415 naming description and stores nothing', method: 'PUT', path: NEW, body: fresh({ description: { text: 'x' } }), status: 415, kind: 'invalid-item', errors: [['/description', /string/]] },
  { name: 'PUT item with an array content_body answers 415 naming content_body and stores nothing', method: 'PUT', path: NEW, body: fresh({ content_body: ['/x'] }), status: 415, kind: 'invalid-item', errors: [['/content_body', /string/]] },
  { name: 'PUT item with a numeric uri answers 415 naming uri and stores nothing', method: 'PUT', path: NEW, body: fresh({ uri: 7 }), status: 415, kind: 'invalid-item', errors: [['/uri', /string/]] },
  { name: 'PUT item with tags as a string answers 415 naming tags and stores nothing', method: 'PUT', path: NEW, body: fresh({ tags: 'news' }), status: 415, kind: 'invalid-item', errors: [['/tags', /array/]] },
  { name: 'PUT item with a numeric tag answers 415 naming tags.0 and stores nothing', method: 'PUT', path: NEW, body: fresh({ tags: [1] }), status: 415, kind: 'invalid-item', errors: [['/tags/0', /string/]] },
  { name: 'PUT item with an empty tag answers 415 naming tags.1 and stores nothing', method: 'PUT', path: NEW, body: fresh({ tags: ['ok', ''] }), status: 415, kind: 'invalid-item', errors: [['/tags/1', /fewer than 1/]] },
  { name: 'PUT item with categories as a string answers 415 naming categories and stores nothing', method: 'PUT', path: NEW, body: fresh({ categories: 'news' }), status: 415, kind: 'invalid-item', errors: [['/categories', /array/]] },
  { name: 'PUT item with a numeric category answers 415 naming categories.0 and stores nothing', method: 'PUT', path: NEW, body: fresh({ categories: [1] }), status: 415, kind: 'invalid-item', errors: [['/categories/0', /documented shape/]] },
  { name: 'PUT item with an object category answers 415 naming categories.1 and stores nothing', method: 'PUT', path: NEW, body: fresh({ categories: ['news', { name: 'sport' }] }), status: 415, kind: 'invalid-item', errors: [['/categories/1', /documented shape/]] },
  { name: 'PUT item with a number inside a category path answers 415 naming categories.0 and stores nothing', method: 'PUT', path: NEW, body: fresh({ categories: [['news', 2]] }), status: 415, kind: 'invalid-item', errors: [['/categories/0', /documented shape/]] },
  { name: 'PUT item with an empty category path answers 415 naming categories.0 and stores nothing', method: 'PUT', path: NEW, body: fresh({ categories: [[]] }), status: 415, kind: 'invalid-item', errors: [['/categories/0', /documented shape/]] },
  { name: 'PUT item with images as a string answers 415 naming images and stores nothing', method: 'PUT', path: NEW, body: fresh({ images: 'https://example.com/1.jpg' }), status: 415, kind: 'invalid-item', errors: [['/images', /array/]] },
  { name: 'PUT item with a numeric image answers 415 naming images.0 and stores nothing', method: 'PUT', path: NEW, body: fresh({ images: [1] }), status: 415, kind: 'invalid-item', errors: [['/images/0', /documented shape/]] },
  { name: 'PUT item with an image given as an array answers 415 naming images.0 and stores nothing', method: 'PUT', path: NEW, body: fresh({ images: [['https://example.com/1.jpg']] }), status: 415, kind: 'invalid-item', errors: [['/images/0', /documented shape/]] },
  { name: 'PUT item with an image object holding a number answers 415 naming images.1 and stores nothing', method: 'PUT', path: NEW, body: fresh({ images: ['https://example.com/1.jpg', { url: 1 }] }), status: 415, kind: 'invalid-item', errors: [['/images/1', /documented shape/]] },
  { name: 'PUT item with item_attributes of neither shape answers 415 naming item_attributes and stores nothing', method: 'PUT', path: NEW, body: fresh({ item_attributes: { pages: 12 } }), status: 415, kind: 'invalid-item', errors: [['/item_attributes', /documented shape/]] },
  { name: 'PUT item with item_attributes {name, value} whose value is a number answers 415 and stores nothing', method: 'PUT', path: NEW, body: fresh({ item_attributes: { name: 'n', value: 1 } }), status: 415, kind: 'invalid-item', errors: [['/item_attributes', /documented shape/]] },
  { name: 'PUT item with item_attributes as a string answers 415 naming item_attributes and stores nothing', method: 'PUT', path: NEW, body: fresh({ item_attributes: 'author=Ann' }), status: 415, kind: 'invalid-item', errors: [['/item_attributes', /documented shape/]] },
  { name: 'PUT item with item_attributes as an array answers 415 naming item_attributes and stores nothing', method: 'PUT', path: NEW, body: fresh({ item_attributes: [{ name: 'n', value: {} }] }), status: 415, kind: 'invalid-item', errors: [['/item_attributes', /documented shape/]] },
  { name: 'PUT item with an ancestry_level outside the enumeration answers 415 naming ancestry_level and stores nothing', method: 'PUT', path: NEW, body: fresh({ ancestry_level: 'family' }), status: 415, kind: 'invalid-item', errors: [['/ancestry_level', /allowed values/]] },
  { name: 'PUT item with a capitalised ancestry_level answers 415 naming ancestry_level and stores nothing', method: 'PUT', path: ITEM, body: json({ ...SEED, ancestry_level: 'Group' }), status: 415, kind: 'invalid-item', errors: [['/ancestry_level', /allowed values/]] },
  { name: 'PUT item with an empty language answers 415 naming language and stores nothing', method: 'PUT', path: NEW, body: fresh({ language: '' }), status: 415, kind: 'invalid-item', errors: [['/language', /fewer than 1/]] },
  { name: 'PUT item with flags as a string answers 415 naming flags and stores nothing', method: 'PUT', path: NEW, body: fresh({ flags: 'premium' }), status: 415, kind: 'invalid-item', errors: [['/flags', /array/]] },
  { name: 'PUT item with a numeric parent answers 415 naming parent and stores nothing', method: 'PUT', path: NEW, body: fresh({ parent: 7 }), status: 415, kind: 'invalid-item', errors: [['/parent', /string/]] },
  { name: 'PUT item with an array access_type answers 415 naming access_type and stores nothing', method: 'PUT', path: NEW, body: fresh({ access_type: ['/paid'] }), status: 415, kind: 'invalid-item', errors: [['/access_type', /string/]] },
  { name: 'PUT item with a numeric environment answers 415 naming environment and stores nothing', method: 'PUT', path: NEW, body: fresh({ environment: 1 }), status: 415, kind: 'invalid-item', errors: [['/environment', /string/]] },
  { name: 'PUT item with a null environment answers 415 naming environment and stores nothing', method: 'PUT', path: NEW, body: fresh({ environment: null }), status: 415, kind: 'invalid-item', errors: [['/environment', /string/]] },
  { name: 'PUT item with a numeric item_id answers 415 naming item_id and stores nothing', method: 'PUT', path: '/api/demo/items/article/1', body: fresh({ item_id: 1 }), status: 415, kind: 'invalid-item', errors: [['/item_id', /string/]] },
  { name: 'PUT item with an empty item_id in the body answers 415 naming item_id and stores nothing', method: 'PUT', path: NEW, body: fresh({ item_id: '' }), status: 415, kind: 'invalid-item', errors: [['/item_id', /fewer than 1/]] },
  { name: 'PUT item with a control character in item_id answers 415 naming item_id and stores nothing', method: 'PUT', path: '/api/demo/items/article/bad%01id', body: fresh({ item_id: 'bad\u0001id' }), status: 415, kind: 'invalid-item', errors: [['/item_id', /pattern/]] },
  { name: 'PUT item with several bad fields answers 415 naming each of them and stores nothing', method: 'PUT', path: NEW, body: fresh({ title: 1, tags: 'x', ancestry_level: 'x' }), status: 415, kind: 'invalid-item', errors: [['/title'], ['/tags'], ['/ancestry_level']] },
  { name: 'POST item with an array body answers 415 and stores nothing', method: 'POST', path: WEBHOOK, body: json([FRESH]), status: 415, kind: 'invalid-item', errors: [['', /object/]] },
  { name: 'POST item with a numeric title answers 415 naming title and stores nothing', method: 'POST', path: WEBHOOK, body: fresh({ title: 42 }), status: 415, kind: 'invalid-item', errors: [['/title', /string/]] },
];

const TYPE_AND_PATH: BadInput[] = [
  { name: 'PUT item of an unknown item type answers 415 naming item_type and stores nothing', method: 'PUT', path: '/api/demo/items/podcast/p-1', body: json({ environment: ENV, item_id: 'p-1', item_type: 'podcast' }), status: 415, kind: 'invalid-item', errors: [['/item_type', /not an item type/]] },
  { name: 'POST item of an unknown item type answers 415 naming item_type and stores nothing', method: 'POST', path: '/api/demo/items/podcast', body: json({ environment: ENV, item_id: 'p-1', item_type: 'podcast' }), status: 415, kind: 'invalid-item', errors: [['/item_type', /not an item type/]] },
  { name: 'PUT item whose body names another environment than the path answers 415 naming environment and stores nothing', method: 'PUT', path: NEW, body: fresh({ environment: 'shop' }), status: 415, kind: 'invalid-item', errors: [['/environment', /differs/]] },
  { name: 'PUT item whose body names another item_type than the path answers 415 naming item_type and stores nothing', method: 'PUT', path: NEW, body: fresh({ item_type: 'video' }), status: 415, kind: 'invalid-item', errors: [['/item_type', /differs/]] },
  { name: 'PUT item whose body names another item_id than the path answers 415 naming item_id and stores nothing', method: 'PUT', path: NEW, body: fresh({ item_id: 'other' }), status: 415, kind: 'invalid-item', errors: [['/item_id', /differs/]] },
  { name: 'PUT update whose body renames the item answers 415 naming item_id and changes nothing', method: 'PUT', path: ITEM, body: json({ ...SEED, item_id: 'new-1' }), status: 415, kind: 'invalid-item', errors: [['/item_id', /differs/]] },
  { name: 'PUT item whose body item_type differs from the path only in case answers 415 naming item_type and stores nothing', method: 'PUT', path: NEW, body: fresh({ item_type: 'Article' }), status: 415, kind: 'invalid-item', errors: [['/item_type', /differs/], ['/item_type', /not an item type/]] },
  { name: 'PUT item whose body disagrees with the path on environment, type and id answers 415 naming all three and stores nothing', method: 'PUT', path: NEW, body: json({ environment: 'shop', item_type: 'video', item_id: 'other' }), status: 415, kind: 'invalid-item', errors: [['/environment', /differs/], ['/item_type', /differs/], ['/item_id', /differs/]] },
  { name: 'POST item whose body names another environment than the path answers 415 naming environment and stores nothing', method: 'POST', path: WEBHOOK, body: fresh({ environment: 'shop' }), status: 415, kind: 'invalid-item', errors: [['/environment', /differs/]] },
  { name: 'POST item whose body names another item_type than the path answers 415 naming item_type and stores nothing', method: 'POST', path: WEBHOOK, body: fresh({ item_type: 'video' }), status: 415, kind: 'invalid-item', errors: [['/item_type', /differs/]] },
];

const OFFSET = /offset or Z/;
const TIMESTAMPS: BadInput[] = [
  { name: 'PUT item with publication_datetime without offset answers 415 naming publication_datetime and stores nothing', method: 'PUT', path: NEW, body: fresh({ publication_datetime: '2024-05-01T10:00:00' }), status: 415, kind: 'invalid-item', errors: [['/publication_datetime', OFFSET]] },
  { name: 'PUT item with end_datetime without offset answers 415 naming end_datetime and stores nothing', method: 'PUT', path: NEW, body: fresh({ end_datetime: '2030-01-01T00:00:00' }), status: 415, kind: 'invalid-item', errors: [['/end_datetime', OFFSET]] },
  { name: 'PUT update with fractional seconds but no offset answers 415 and leaves the item unchanged', method: 'PUT', path: ITEM, body: json({ ...SEED, publication_datetime: '2024-05-01T10:00:00.123' }), status: 415, kind: 'invalid-item', errors: [['/publication_datetime', OFFSET]] },
  { name: 'PUT item with the impossible date 2024-02-30 answers 415 naming publication_datetime and stores nothing', method: 'PUT', path: NEW, body: fresh({ publication_datetime: '2024-02-30T00:00:00Z' }), status: 415, kind: 'invalid-item', errors: [['/publication_datetime', OFFSET]] },
  { name: 'PUT item with 29 February of a common year answers 415 naming end_datetime and stores nothing', method: 'PUT', path: NEW, body: fresh({ end_datetime: '2023-02-29T00:00:00Z' }), status: 415, kind: 'invalid-item', errors: [['/end_datetime', OFFSET]] },
  { name: 'PUT item with hour 25 answers 415 naming publication_datetime and stores nothing', method: 'PUT', path: NEW, body: fresh({ publication_datetime: '2024-05-01T25:00:00Z' }), status: 415, kind: 'invalid-item', errors: [['/publication_datetime', OFFSET]] },
  { name: 'PUT item with a date without time answers 415 naming publication_datetime and stores nothing', method: 'PUT', path: NEW, body: fresh({ publication_datetime: '2024-05-01' }), status: 415, kind: 'invalid-item', errors: [['/publication_datetime', OFFSET]] },
  { name: 'PUT item with an RFC 2822 date answers 415 naming publication_datetime and stores nothing', method: 'PUT', path: NEW, body: fresh({ publication_datetime: 'Wed, 01 May 2024 10:00:00 GMT' }), status: 415, kind: 'invalid-item', errors: [['/publication_datetime', OFFSET]] },
  { name: 'PUT item with a Unix time number as publication_datetime answers 415 naming it and stores nothing', method: 'PUT', path: NEW, body: fresh({ publication_datetime: 1714550400 }), status: 415, kind: 'invalid-item', errors: [['/publication_datetime', /string/]] },
  { name: 'POST item with end_datetime without offset answers 415 naming end_datetime and stores nothing', method: 'POST', path: WEBHOOK, body: fresh({ end_datetime: '2030-01-01T00:00:00' }), status: 415, kind: 'invalid-item', errors: [['/end_datetime', OFFSET]] },
];

const TOO_LONG: BadInput[] = [
  { name: 'PUT item with an item_id of 300 characters answers 415 naming item_id and stores nothing', method: 'PUT', path: `/api/demo/items/article/${'i'.repeat(300)}`, body: fresh({ item_id: 'i'.repeat(300) }), status: 415, kind: 'invalid-item', errors: [['/item_id', /more than 256/]] },
  { name: 'PUT item with a title of 3000 characters answers 415 naming title and stores nothing', method: 'PUT', path: NEW, body: fresh({ title: 't'.repeat(3000) }), status: 415, kind: 'invalid-item', errors: [['/title', /more than 2048/]] },
  { name: 'PUT item with a tag of 300 characters answers 415 naming tags.0 and stores nothing', method: 'PUT', path: NEW, body: fresh({ tags: ['t'.repeat(300)] }), status: 415, kind: 'invalid-item', errors: [['/tags/0', /more than 256/]] },
  { name: 'PUT item with 201 categories answers 415 naming categories and stores nothing', method: 'PUT', path: NEW, body: fresh({ categories: Array.from({ length: 201 }, (_, i) => `c${i}`) }), status: 415, kind: 'invalid-item', errors: [['/categories', /more than 200/]] },
  { name: 'PUT item with a parent of 300 characters answers 415 naming parent and stores nothing', method: 'PUT', path: NEW, body: fresh({ parent: 'p'.repeat(300) }), status: 415, kind: 'invalid-item', errors: [['/parent', /more than 256/]] },
];

const DEEP_ARRAYS = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
const NESTING: BadInput[] = [
  { name: 'PUT item with item_attributes.value nested 1000 levels answers 415 naming item_attributes and stores nothing', method: 'PUT', path: NEW, body: fresh({ item_attributes: { name: 'deep', value: nestedObject(1000) } }), status: 415, kind: 'invalid-item', errors: [['/item_attributes', /nest deeper than 16/]] },
  { name: 'PUT item with item_attributes nested one level past the limit answers 415 and stores nothing', method: 'PUT', path: NEW, body: fresh({ item_attributes: { name: 'deep', value: nestedObject(16) } }), status: 415, kind: 'invalid-item', errors: [['/item_attributes', /nest deeper than 16/]] },
  { name: 'PUT item with a body of 100000 nested objects answers 415 and stores nothing', method: 'PUT', path: NEW, body: `${'{"a":'.repeat(100_000)}{}${'}'.repeat(100_000)}`, status: 415, kind: 'invalid-item', errors: [['/a', /not a field of Item/], ['/environment', /required/], ['/item_id', /required/], ['/item_type', /required/]] },
  { name: 'PUT item with an unknown field holding 100000 nested arrays answers 415 naming the field and stores nothing', method: 'PUT', path: NEW, body: `${fresh({}).slice(0, -1)},"extra":${DEEP_ARRAYS}}`, status: 415, kind: 'invalid-item', errors: [['/extra', /not a field of Item/]] },
];

const UNKNOWN_FIELDS: BadInput[] = [
  { name: 'PUT item with an unknown field answers 415 saying it is not a field of Item and stores nothing', method: 'PUT', path: NEW, body: fresh({ colour: 'red' }), status: 415, kind: 'invalid-item', errors: [['/colour', /^is not a field of Item$/]] },
  { name: 'PUT update with a misspelt field answers 415 naming it and leaves the item unchanged', method: 'PUT', path: ITEM, body: json({ ...SEED, titel: 'Typo' }), status: 415, kind: 'invalid-item', errors: [['/titel', /not a field of Item/]] },
  { name: 'PUT item with a field in the wrong case answers 415 naming it and stores nothing', method: 'PUT', path: NEW, body: fresh({ Title: 'Case' }), status: 415, kind: 'invalid-item', errors: [['/Title', /not a field of Item/]] },
  { name: 'PUT item with two unknown fields answers 415 naming both and stores nothing', method: 'PUT', path: NEW, body: fresh({ id: 'new-1', type: 'article' }), status: 415, kind: 'invalid-item', errors: [['/id', /not a field of Item/], ['/type', /not a field of Item/]] },
  { name: 'PUT item with a top-level __proto__ field answers 415 naming it and stores nothing', method: 'PUT', path: NEW, body: `${fresh({}).slice(0, -1)},"__proto__":{"title":"x"}}`, status: 415, kind: 'invalid-item', errors: [['/__proto__', /not a field of Item/]] },
  { name: 'POST item with an unknown field answers 415 naming it and stores nothing', method: 'POST', path: WEBHOOK, body: fresh({ colour: 'red' }), status: 415, kind: 'invalid-item', errors: [['/colour', /not a field of Item/]] },
];

// Values the store cannot keep as sent: msgpackr renames a `__proto__` key on read, and UTF-8
// cannot carry an unpaired surrogate. Accepting them would store something else than was sent.
const UNSTORABLE: BadInput[] = [
  { name: 'PUT item with a __proto__ key in item_attributes answers 415 naming it and stores nothing', method: 'PUT', path: NEW, body: `${fresh({}).slice(0, -1)},"item_attributes":{"__proto__":"x","a":"b"}}`, status: 415, kind: 'invalid-item', errors: [['/item_attributes/__proto__', /reserved/]] },
  { name: 'PUT item with a __proto__ key inside item_attributes.value answers 415 naming it and stores nothing', method: 'PUT', path: NEW, body: `${fresh({}).slice(0, -1)},"item_attributes":{"name":"n","value":{"k":{"__proto__":{"x":1}}}}}`, status: 415, kind: 'invalid-item', errors: [['/item_attributes/value/k/__proto__', /reserved/]] },
  { name: 'PUT item with a __proto__ key in an image object answers 415 naming it and stores nothing', method: 'PUT', path: NEW, body: `${fresh({}).slice(0, -1)},"images":[{"__proto__":"x"}]}`, status: 415, kind: 'invalid-item', errors: [['/images/0/__proto__', /reserved/]] },
  { name: 'PUT item with an unpaired surrogate in the title answers 415 naming title and stores nothing', method: 'PUT', path: NEW, body: `${fresh({}).slice(0, -1)},"title":"a\\ud800b"}`, status: 415, kind: 'invalid-item', errors: [['/title', /surrogate/]] },
  { name: 'PUT item with an unpaired surrogate in an item_attributes key answers 415 naming item_attributes and stores nothing', method: 'PUT', path: NEW, body: `${fresh({}).slice(0, -1)},"item_attributes":{"\\udc00":"x"}}`, status: 415, kind: 'invalid-item', errors: [['/item_attributes', /surrogate/]] },
];

const MISSING: BadInput[] = [
  { name: 'PUT item without environment answers 415 saying environment is required and stores nothing', method: 'PUT', path: NEW, body: withoutKey('environment'), status: 415, kind: 'invalid-item', errors: [['/environment', /is required/]] },
  { name: 'PUT item without item_id answers 415 saying item_id is required and stores nothing', method: 'PUT', path: NEW, body: withoutKey('item_id'), status: 415, kind: 'invalid-item', errors: [['/item_id', /is required/]] },
  { name: 'PUT item without item_type answers 415 saying item_type is required and stores nothing', method: 'PUT', path: NEW, body: withoutKey('item_type'), status: 415, kind: 'invalid-item', errors: [['/item_type', /is required/]] },
  { name: 'PUT item with an empty object answers 415 naming the three required fields and stores nothing', method: 'PUT', path: ITEM, body: '{}', status: 415, kind: 'invalid-item', errors: [['/environment', /is required/], ['/item_id', /is required/], ['/item_type', /is required/]] },
  { name: 'POST item without item_id answers 415 saying item_id is required and stores nothing', method: 'POST', path: WEBHOOK, body: withoutKey('item_id'), status: 415, kind: 'invalid-item', errors: [['/item_id', /is required/]] },
];

const BAD_PATHS: BadInput[] = [
  { name: 'GET item with invalid percent-encoding in the path answers 400', method: 'GET', path: '/api/demo/items/article/%E0%A4%A', status: 400, kind: 'invalid-request' },
  { name: 'PUT item with invalid percent-encoding in the path answers 400 and stores nothing', method: 'PUT', path: '/api/demo/items/article/%E0%A4%A', body: fresh({}), status: 400, kind: 'invalid-request' },
  { name: 'DELETE item with invalid percent-encoding in the path answers 400 and changes nothing', method: 'DELETE', path: '/api/demo/items/article/%E0%A4%A', status: 400, kind: 'invalid-request' },
  { name: 'POST enable with invalid percent-encoding in the path answers 400 and changes nothing', method: 'POST', path: '/api/demo/items/article/%E0%A4%A/enable', status: 400, kind: 'invalid-request' },
  { name: 'GET item with an invalid percent-encoded item type answers 400', method: 'GET', path: '/api/demo/items/%ZZ/seed-1', status: 400, kind: 'invalid-request' },
  { name: 'POST item with an invalid percent-encoded item type answers 400 and stores nothing', method: 'POST', path: '/api/demo/items/%ZZ', body: fresh({}), status: 400, kind: 'invalid-request' },
  { name: 'GET unknown route /api/demo/nothing answers 404', method: 'GET', path: '/api/demo/nothing', status: 404, kind: 'not-found' },
  { name: 'GET unknown route /nope answers 404', method: 'GET', path: '/nope', status: 404, kind: 'not-found' },
  { name: 'GET /api/demo/items without an item type answers 404', method: 'GET', path: '/api/demo/items', status: 404, kind: 'not-found' },
  { name: 'GET a path below an item answers 404', method: 'GET', path: `${ITEM}/x/y`, status: 404, kind: 'not-found' },
  { name: 'POST an unknown item action answers 404 and changes nothing', method: 'POST', path: `${ITEM}/archive`, status: 404, kind: 'not-found' },
  { name: 'PUT on an unknown route with a body answers 404 and stores nothing', method: 'PUT', path: '/api/demo/item/article/new-1', body: fresh({}), status: 404, kind: 'not-found' },
  { name: 'PATCH item answers 405 allowing PUT, GET, HEAD, DELETE and changes nothing', method: 'PATCH', path: ITEM, body: json({ title: 'Patched' }), status: 405, kind: 'method-not-allowed', allow: ['DELETE', 'GET', 'HEAD', 'PUT'] },
  { name: 'POST on an item answers 405 allowing PUT, GET, HEAD, DELETE and changes nothing', method: 'POST', path: ITEM, body: json(SEED), status: 405, kind: 'method-not-allowed', allow: ['DELETE', 'GET', 'HEAD', 'PUT'] },
  { name: 'GET enable answers 405 allowing POST', method: 'GET', path: `${ITEM}/enable`, status: 405, kind: 'method-not-allowed', allow: ['POST'] },
  { name: 'PUT disable answers 405 allowing POST and changes nothing', method: 'PUT', path: `${ITEM}/disable`, status: 405, kind: 'method-not-allowed', allow: ['POST'] },
  { name: 'DELETE on an item type answers 405 allowing GET, HEAD, POST and deletes nothing', method: 'DELETE', path: '/api/demo/items/article', status: 405, kind: 'method-not-allowed', allow: ['GET', 'HEAD', 'POST'] },
  { name: 'PUT on an item type answers 405 allowing GET, HEAD, POST and stores nothing', method: 'PUT', path: '/api/demo/items/article', body: fresh({}), status: 405, kind: 'method-not-allowed', allow: ['GET', 'HEAD', 'POST'] },
];

const UNKNOWN_ITEMS: BadInput[] = [
  { name: 'POST enable of an unknown item answers 400 and changes nothing', method: 'POST', path: `${NEW}/enable`, status: 400, kind: 'item-not-found' },
  { name: 'POST disable of an unknown item answers 400 and changes nothing', method: 'POST', path: `${NEW}/disable`, status: 400, kind: 'item-not-found' },
  { name: 'POST disable of a known id under another item type answers 400 and changes nothing', method: 'POST', path: '/api/demo/items/video/seed-1/disable', status: 400, kind: 'item-not-found' },
  { name: 'GET of an unknown item answers 404', method: 'GET', path: NEW, status: 404, kind: 'item-not-found' },
  { name: 'GET of a known id under an unknown item type answers 404', method: 'GET', path: '/api/demo/items/podcast/seed-1', status: 404, kind: 'item-not-found' },
  { name: 'DELETE of an unknown item answers 404 and changes nothing', method: 'DELETE', path: NEW, status: 404, kind: 'item-not-found' },
  { name: 'PUT without body on an unknown item answers 404 and stores nothing', method: 'PUT', path: NEW, status: 404, kind: 'item-not-found' },
  { name: 'PUT with an empty body on an unknown item answers 404 and stores nothing', method: 'PUT', path: NEW, body: '', status: 404, kind: 'item-not-found' },
  // Ids longer than any storable id cannot name an item; LMDB must never see such a key.
  { name: 'GET of an item id of 5000 characters answers 404', method: 'GET', path: `/api/demo/items/article/${LONG_ID}`, status: 404, kind: 'item-not-found' },
  { name: 'GET of an item type of 5000 characters answers 404', method: 'GET', path: `/api/demo/items/${LONG_ID}/seed-1`, status: 404, kind: 'item-not-found' },
  { name: 'DELETE of an item id of 5000 characters answers 404 and changes nothing', method: 'DELETE', path: `/api/demo/items/article/${LONG_ID}`, status: 404, kind: 'item-not-found' },
  { name: 'POST enable of an item id of 5000 characters answers 400 and changes nothing', method: 'POST', path: `/api/demo/items/article/${LONG_ID}/enable`, status: 400, kind: 'item-not-found' },
  { name: 'POST disable of an item id of 5000 multi-byte characters answers 400 and changes nothing', method: 'POST', path: `/api/demo/items/article/${encodeURIComponent('é'.repeat(2500))}/disable`, status: 400, kind: 'item-not-found' },
  { name: 'PUT without body on an item id of 5000 characters answers 404 and stores nothing', method: 'PUT', path: `/api/demo/items/article/${LONG_ID}`, status: 404, kind: 'item-not-found' },
];

const LIMIT_RULE = /from 1 to 1000/;
const LIST_QUERIES: BadInput[] = [
  { name: 'GET list with limit=0 answers 400 naming limit', method: 'GET', path: `${LIST}?limit=0`, status: 400, kind: 'invalid-request', errors: [['limit', LIMIT_RULE]] },
  { name: 'GET list with limit=abc answers 400 naming limit', method: 'GET', path: `${LIST}?limit=abc`, status: 400, kind: 'invalid-request', errors: [['limit', LIMIT_RULE]] },
  { name: 'GET list with limit=5000 answers 400 naming limit', method: 'GET', path: `${LIST}?limit=5000`, status: 400, kind: 'invalid-request', errors: [['limit', LIMIT_RULE]] },
  { name: 'GET list with limit=1001 answers 400 naming limit', method: 'GET', path: `${LIST}?limit=1001`, status: 400, kind: 'invalid-request', errors: [['limit', LIMIT_RULE]] },
  { name: 'GET list with a negative limit answers 400 naming limit', method: 'GET', path: `${LIST}?limit=-1`, status: 400, kind: 'invalid-request', errors: [['limit', LIMIT_RULE]] },
  { name: 'GET list with a fractional limit answers 400 naming limit', method: 'GET', path: `${LIST}?limit=1.5`, status: 400, kind: 'invalid-request', errors: [['limit', LIMIT_RULE]] },
  { name: 'GET list with an empty limit answers 400 naming limit', method: 'GET', path: `${LIST}?limit=`, status: 400, kind: 'invalid-request', errors: [['limit', LIMIT_RULE]] },
  { name: 'GET list with a forged cursor answers 400 naming cursor', method: 'GET', path: `${LIST}?cursor=not%20a%20cursor!`, status: 400, kind: 'invalid-request', errors: [['cursor', /not a cursor/]] },
  { name: 'GET list with a cursor in standard base64 padding answers 400 naming cursor', method: 'GET', path: `${LIST}?cursor=${encodeURIComponent(Buffer.from('seed-1?').toString('base64'))}`, status: 400, kind: 'invalid-request', errors: [['cursor', /not a cursor/]] },
  { name: 'GET list with a cursor longer than any item id answers 400 naming cursor', method: 'GET', path: `${LIST}?cursor=${Buffer.from(LONG_ID).toString('base64url')}`, status: 400, kind: 'invalid-request', errors: [['cursor', /not a cursor/]] },
  { name: 'GET list with an unknown query parameter answers 400 naming it', method: 'GET', path: `${LIST}?offset=10`, status: 400, kind: 'invalid-request', errors: [['offset', /not a query parameter/]] },
  { name: 'GET list with a bad limit and an unknown parameter answers 400 naming both', method: 'GET', path: `${LIST}?limit=0&page=2`, status: 400, kind: 'invalid-request', errors: [['limit', LIMIT_RULE], ['page', /not a query parameter/]] },
  { name: 'GET list of an unknown item type answers 400 naming item_type', method: 'GET', path: '/api/demo/items/podcast', status: 400, kind: 'invalid-request', errors: [['item_type', /must be one of article, video, product/]] },
];

describe('Items API bad input', () => {
  let server: TestServer;
  let token: string;
  let seedStored: unknown;

  const send = (method: string, path: string, body?: string | Uint8Array) =>
    fetch(`${server.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body }),
    });

  before(async () => {
    server = await startServer();
    token = await getToken(server);
    const res = await send('PUT', ITEM, json(SEED));
    assert.equal(res.status, 200);
    seedStored = await (await send('GET', ITEM)).json();
  });
  after(() => server.close());

  const groups: Array<[string, BadInput[]]> = [
    ['body that is not JSON', NOT_JSON],
    ['JSON of the wrong shape', WRONG_SHAPE],
    ['unknown item type and path/body disagreement', TYPE_AND_PATH],
    ['timestamps', TIMESTAMPS],
    ['strings and arrays over their limits', TOO_LONG],
    ['deep nesting', NESTING],
    ['unknown fields', UNKNOWN_FIELDS],
    ['values the store cannot keep as sent', UNSTORABLE],
    ['missing required fields', MISSING],
    ['paths, routes and methods', BAD_PATHS],
    ['unknown items', UNKNOWN_ITEMS],
    ['list query', LIST_QUERIES],
  ];
  for (const [group, cases] of groups) {
    describe(group, () => {
      for (const c of cases) {
        test(c.name, async () => {
          const stored = await snapshotStore(server.dataDir);
          const res = await send(c.method, c.path, c.body);
          const allow = res.headers.get('allow');
          const problem = await assertProblem(res, c.status, c.kind);
          if (c.errors) assertFieldErrors(problem, c.errors);
          else assert.equal(problem.errors, undefined, 'no field errors');
          if (c.allow) {
            assert.ok(allow, 'an Allow header');
            assert.deepEqual(allow.split(',').map((m) => m.trim()).sort(), c.allow);
          }
          assertSameStore(await snapshotStore(server.dataDir), stored, 'the store is unchanged');
        });
      }
    });
  }

  test('PUT item with a body of 100000 nested arrays answers a 4xx problem, stores nothing, and the server keeps answering', async () => {
    const stored = await snapshotStore(server.dataDir);
    const res = await send('PUT', NEW, DEEP_ARRAYS);
    assert.ok(res.status === 415 || res.status === 422, `status ${res.status}`);
    const problem = await assertProblem(res, res.status, res.status === 415 ? 'invalid-item' : 'body-not-json');
    if (res.status === 415) assertFieldErrors(problem, [['', /object/]]);
    assertSameStore(await snapshotStore(server.dataDir), stored);
    const health = await fetch(`${server.url}/health`);
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { status: string }).status, 'ok');
  });

  test('POST item with a body of 100000 nested arrays answers a 4xx problem and stores nothing', async () => {
    const stored = await snapshotStore(server.dataDir);
    const res = await send('POST', WEBHOOK, DEEP_ARRAYS);
    assert.ok(res.status === 415 || res.status === 422, `status ${res.status}`);
    await assertProblem(res, res.status, res.status === 415 ? 'invalid-item' : 'body-not-json');
    assertSameStore(await snapshotStore(server.dataDir), stored);
  });

  test('after every bad input the seed item reads back unchanged, no other item exists, no 5xx was logged, and /health answers 200', async () => {
    const res = await send('GET', ITEM);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), seedStored);
    for (const type of ['article', 'video', 'product']) {
      const list = await send('GET', `/api/demo/items/${type}`);
      assert.equal(list.status, 200);
      const expected = type === 'article' ? [{ item_id: 'seed-1', enabled: true }] : [];
      assert.deepEqual(await list.json(), { items: expected, next_cursor: null });
    }
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
    // respond.ts logs every 5xx with kind 'internal'.
    assert.deepEqual(server.logs.filter((line) => line.includes('"kind":"internal"')), [], 'no request answered a 5xx');
  });
});

describe('Items API body size limit (AFFINITY_MAX_BODY_BYTES=2048)', () => {
  const LIMIT = 2048;
  let server: TestServer;
  let token: string;

  /** A valid Item body of exactly `bytes` bytes. */
  const bodyOfSize = (itemId: string, bytes: number) => {
    const base = json({ environment: ENV, item_id: itemId, item_type: 'article', content_body: '' });
    return json({ environment: ENV, item_id: itemId, item_type: 'article', content_body: 'x'.repeat(bytes - base.length) });
  };
  const put = (itemId: string, body: string, method = 'PUT') =>
    fetch(`${server.url}/api/demo/items/article${method === 'PUT' ? `/${itemId}` : ''}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body,
    });

  before(async () => {
    server = await startServer({ env: { AFFINITY_MAX_BODY_BYTES: String(LIMIT) } });
    token = await getToken(server);
  });
  after(() => server.close());

  test('PUT item with a valid JSON body larger than the limit answers 413 and stores nothing', async () => {
    const stored = await snapshotStore(server.dataDir);
    const res = await put('big-1', bodyOfSize('big-1', 10 * LIMIT));
    const problem = await assertProblem(res, 413, 'body-too-large');
    assert.match(problem.detail, /2048 bytes/);
    assert.equal(problem.errors, undefined);
    assertSameStore(await snapshotStore(server.dataDir), stored);
  });

  test('PUT item with a body one byte over the limit answers 413 and stores nothing', async () => {
    const stored = await snapshotStore(server.dataDir);
    const body = bodyOfSize('big-2', LIMIT + 1);
    assert.equal(Buffer.byteLength(body), LIMIT + 1);
    await assertProblem(await put('big-2', body), 413, 'body-too-large');
    assertSameStore(await snapshotStore(server.dataDir), stored);
  });

  test('POST item with a body larger than the limit answers 413 and stores nothing', async () => {
    const stored = await snapshotStore(server.dataDir);
    await assertProblem(await put('big-3', bodyOfSize('big-3', 4 * LIMIT), 'POST'), 413, 'body-too-large');
    assertSameStore(await snapshotStore(server.dataDir), stored);
  });

  /** PUT with a streamed body: fetch sends it chunked, without Content-Length. */
  const putChunked = (itemId: string, body: string) =>
    fetch(`${server.url}/api/demo/items/article/${itemId}`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: new Blob([body]).stream(),
      duplex: 'half',
    } as RequestInit);

  test('PUT item with a chunked body (no Content-Length) larger than the limit answers 413 and stores nothing', async () => {
    const stored = await snapshotStore(server.dataDir);
    await assertProblem(await putChunked('big-4', bodyOfSize('big-4', 4 * LIMIT)), 413, 'body-too-large');
    assertSameStore(await snapshotStore(server.dataDir), stored);
  });

  test('PUT item with a chunked body under the limit is accepted', async () => {
    const body = bodyOfSize('chunked', LIMIT - 100);
    const res = await putChunked('chunked', body);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '');
  });

  test('after 413 answers the server still answers /health, and a body of exactly the limit is accepted', async () => {
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
    const body = bodyOfSize('fits', LIMIT);
    assert.equal(Buffer.byteLength(body), LIMIT);
    const res = await put('fits', body);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '');
    const got = await fetch(`${server.url}/api/demo/items/article/fits`, { headers: { Authorization: `Bearer ${token}` } });
    assert.deepEqual(await got.json(), JSON.parse(body));
  });
});

test('a bad PUT among 40 concurrent good ones (one group commit) answers 415 with its problem, stores nothing of it, and stores all 40 good items', async (t) => {
  const server = await startServer();
  t.after(() => server.close());
  const token = await getToken(server);
  const put = (id: string, body: unknown) =>
    fetch(`${server.url}/api/${ENV}/items/article/${id}`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: json(body),
    });
  const ids = Array.from({ length: 40 }, (_, i) => `batch-${String(i).padStart(2, '0')}`);
  const bad = put('batch-bad', { environment: ENV, item_id: 'batch-bad', item_type: 'article', title: 7 });
  const good = ids.map((id) => put(id, { environment: ENV, item_id: id, item_type: 'article', title: id }));
  assertFieldErrors(await assertProblem(await bad, 415, 'invalid-item'), [['/title', /string/]]);
  for (const res of await Promise.all(good)) assert.equal(res.status, 200, await res.text());
  const list = await fetch(`${server.url}${LIST}`, { headers: { Authorization: `Bearer ${token}` } });
  assert.deepEqual(await list.json(), { items: ids.map((item_id) => ({ item_id, enabled: true })), next_cursor: null });
});
