// The ranking worker's item ids off the GC's heap (serving/item-ids.ts): ids of any script come
// back as they went in, through the arena's and the lookup's growth; ixOf tells apart ids whose
// UTF-16 code units equal another id's UTF-8 bytes; an ix keeps its first id; a list joins in one
// piece; an ix without a configured type is named but never looked up.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ItemIds, idHash } from '../../../src/serving/item-ids.ts';

const NO_TYPE = 0xff;
// ASCII, Latin-1, CJK, an astral character (a surrogate pair), and the longest id allowed (256).
const sample = (i: number) => [`item-${i}`, `café-${i}`, `商品${i}`, `🎬${i}`, `${i}-`.padEnd(256, 'x')][i % 5]!;

test('ids of any script come back by ix and by (type, id), through the growth of the arena and the lookup', () => {
  const ids = new ItemIds();
  const count = 20_000;
  // Set out of ix order, as the builder's records and the change feed give them.
  for (let n = 0; n < count; n++) {
    const ix = (n * 7919) % count;
    ids.grow(ix + 1);
    ids.set(ix, ix % 2, sample(ix));
  }
  for (let ix = 0; ix < count; ix++) {
    assert.equal(ids.idOf(ix), sample(ix));
    assert.equal(ids.ixOf(ix % 2, sample(ix)), ix);
    // The same id under the other type is another item, not held.
    assert.equal(ids.ixOf((ix + 1) % 2, sample(ix)), undefined);
  }
  assert.equal(ids.ixOf(0, 'item-'), undefined);
  assert.equal(ids.ixOf(0, 'item-00'), undefined);
});

test('an id whose code units equal another id\'s UTF-8 bytes is told apart from it', () => {
  // A CJK id and its look-alike, the code units of its UTF-8 bytes ('顡' is E9 A1 A1, 'é¡¡' those
  // code units), with ASCII ids filling the lookup's first table (1,024 slots) from the look-alike's
  // home slot to the CJK id's: a lookup of the look-alike meets the CJK id on its way.
  const slot = (id: string) => idHash(0, id) & 1023;
  const lookalike = (id: string) => String.fromCharCode(...Buffer.from(id));
  let cjk = '';
  let distance = 1024;
  for (let c = 0x4e00; c <= 0x9fff; c++) {
    const id = String.fromCharCode(c);
    const d = (slot(id) - slot(lookalike(id))) & 1023;
    if (d > 0 && d < distance) [cjk, distance] = [id, d];
  }
  const ids = new ItemIds();
  ids.grow(1024);
  ids.set(0, 0, cjk);
  let ix = 1;
  for (let s = slot(lookalike(cjk)); s !== slot(cjk); s = (s + 1) & 1023) {
    let n = 0;
    while (slot(`filler-${n}`) !== s) n++;
    ids.set(ix++, 0, `filler-${n}`);
  }
  assert.equal(ids.ixOf(0, lookalike(cjk)), undefined);
  assert.equal(ids.ixOf(0, cjk), 0);
  ids.set(ix, 0, lookalike(cjk));
  assert.equal(ids.ixOf(0, lookalike(cjk)), ix);
  assert.equal(ids.ixOf(0, cjk), 0);
  // Two bytes of 'é' against two ASCII code units.
  ids.set(ix + 1, 0, 'ab');
  assert.equal(ids.ixOf(0, 'é'), undefined);
  assert.equal(ids.ixOf(0, 'ab'), ix + 1);
});

test('an ix keeps its first id; an ix without a configured type is named but not looked up', () => {
  const ids = new ItemIds();
  ids.grow(3);
  assert.equal(ids.has(0), false);
  assert.equal(ids.idOf(0), undefined);
  ids.set(0, 0, 'first');
  ids.set(0, 0, 'second');
  assert.equal(ids.idOf(0), 'first');
  assert.equal(ids.ixOf(0, 'second'), undefined);
  ids.set(1, NO_TYPE, 'untyped');
  assert.equal(ids.idOf(1), 'untyped');
  assert.equal(ids.ixOf(0, 'untyped'), undefined);
});

test('join gives the ids of a list with the separator, in the order asked, past its scratch size', () => {
  const ids = new ItemIds();
  ids.grow(100);
  for (let ix = 0; ix < 100; ix++) ids.set(ix, 0, sample(ix));
  const order = [42, 3, 99, 0, 7];
  assert.equal(ids.join(order, '\n'), order.map(sample).join('\n'));
  assert.equal(ids.join([], '\n'), '');
  // 100 ids, 20 of them 256 bytes: over the 4,096-byte scratch.
  const all = Array.from({ length: 100 }, (_, i) => 99 - i);
  assert.equal(ids.join(all, '\n'), all.map(sample).join('\n'));
});
