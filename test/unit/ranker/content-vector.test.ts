import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Item } from '../../../src/domain/item.ts';
import { writeContentVector } from '../../../src/ranker/content-vector.ts';
import { contentVector } from '../../helpers/content-vector.ts';
import { VECTOR_DIM } from '../../../src/ranker/reference-ranker.ts';

/** The definition the scanning implementation must agree with exactly: the regex it replaced. */
function referenceVector(item: Item): Float32Array | null {
  const v = new Float32Array(VECTOR_DIM);
  const add = (feature: string, weight: number) => {
    let h = 0x811c9dc5;
    for (let i = 0; i < feature.length; i++) h = Math.imul(h ^ feature.charCodeAt(i), 0x01000193);
    h >>>= 0;
    const d = h % VECTOR_DIM;
    v[d] = v[d]! + (h & 0x80000000 ? -weight : weight);
  };
  const words = (text: string | undefined, weight: number, max: number) => {
    let n = 0;
    for (const [word] of (text ?? '').toLowerCase().matchAll(/[\p{L}\p{N}]{3,}/gu)) {
      add(`w:${word}`, weight);
      if (++n >= max) break;
    }
  };
  for (const path of item.categories ?? []) for (let d = 1; d <= path.length; d++) add(`c:${path.slice(0, d).join('/').toLowerCase()}`, 3 / d ** 0.5);
  for (const tag of item.tags ?? []) add(`t:${tag.toLowerCase()}`, 2);
  words(item.title, 1, Infinity);
  words(item.description, 0.5, 200);
  let norm = 0;
  for (let d = 0; d < VECTOR_DIM; d++) norm += v[d]! * v[d]!;
  if (norm === 0) return null;
  for (let d = 0; d < VECTOR_DIM; d++) v[d]! *= 1 / Math.sqrt(norm);
  return v;
}

const item = (title: string, description?: string): Item => ({ environment: 'demo', item_type: 'article', item_id: 'a', title, ...(description ? { description } : {}) });

test('content vectors equal the regex definition on ASCII, Unicode letters and digits, astral letters, lone surrogates and punctuation', () => {
  const texts = [
    'Market energy: election, climate & season 2024 — ok ab abc',
    'ÉLAN Über straße İstanbul ǅemal naïve café ß 東京都 ١٢٣ 𝐀𝐁𝐂 𝐀b x😀yz \ud800abc de\udc00fg',
    'a1b2c3 __init__ x-y-z 99 999 ÀÀÀ\u0301 ',
    '',
  ];
  for (const title of texts) {
    for (const description of texts) assert.deepEqual(contentVector(item(title, description)), referenceVector(item(title, description)), `${title} / ${description}`);
  }
  const long = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');
  assert.deepEqual(contentVector(item('t', long)), referenceVector(item('t', long)), 'the description is cut at 200 words');
});

test('category and tag features equal the string definition, ASCII hashed as scanned and any other text as built strings', () => {
  const labels = ['News', 'WORLD', 'tech-AI', 'a/b', 'Σ', 'ΟΔΟΣ', 'aΣ', 'İstanbul', 'Straße', 'naïve', '東京', '𝐀x', 'ǅemal', ' spaced Out ', 'x'];
  const items: Item[] = [];
  for (let i = 0; i < labels.length; i++) {
    const path = [labels[i]!, labels[(i + 3) % labels.length]!, labels[(i + 7) % labels.length]!];
    items.push({ ...item('t'), categories: [path, path.slice(0, 1), [labels[(i + 5) % labels.length]!]], tags: [labels[i]!, labels[(i + 1) % labels.length]!] });
  }
  for (const it of items) assert.deepEqual(contentVector(it), referenceVector(it), JSON.stringify([it.categories, it.tags]));
});

test('writeContentVector writes the same vector at an offset of the caller\'s memory, zeroing its slot when the item has no content features', () => {
  const item = { environment: 'demo', item_id: 'x', item_type: 'article', title: 'Jazz guitar festival', categories: [['music', 'jazz']], tags: ['live'] };
  const out = new Float32Array(3 * VECTOR_DIM).fill(7);
  assert.equal(writeContentVector(item, out, VECTOR_DIM), true);
  assert.deepEqual(Array.from(out.subarray(VECTOR_DIM, 2 * VECTOR_DIM)), Array.from(contentVector(item)!));
  assert.ok(out.subarray(0, VECTOR_DIM).every((v) => v === 7) && out.subarray(2 * VECTOR_DIM).every((v) => v === 7), 'the other slots are left as they were');
  assert.equal(writeContentVector({ environment: 'demo', item_id: 'y', item_type: 'article' }, out, VECTOR_DIM), false);
  assert.ok(out.subarray(VECTOR_DIM, 2 * VECTOR_DIM).every((v) => v === 0), 'no features: the slot is zeros');
});
