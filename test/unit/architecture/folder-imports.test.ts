// Issue 17: the folders of src/ are threads and shared layers, and dependencies point from the
// threads to the layers, never back: no two folders may import each other, directly or around a
// circle. scripts/folder-imports.ts reads every relative import (types included); here it runs on
// src/ and, to show it finds what it must, on a small tree with a circle through a type import.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { circlesOf, fileGraph, folderGraph, importedSpecifiers } from '../../../scripts/folder-imports.ts';
import { tempDir } from '../../helpers/server.ts';

const SRC = join(import.meta.dirname, '..', '..', '..', 'src');

test('no folder of src/ imports another that imports it back, directly or around a circle', () => {
  const graph = folderGraph(SRC);
  assert.ok((graph.get('serving')?.get('store')?.length ?? 0) > 0, 'the imports of src/ were read');
  const circles = circlesOf(graph);
  const why = circles.map((circle) => circle.flatMap((from) => circle.flatMap((to) => graph.get(from)?.get(to) ?? [])).join('\n')).join('\n\n');
  assert.deepEqual(circles, [], `folders in a circle, by the imports that close it:\n${why}`);
});

test('no file of src/ imports another that imports it back, types included', () => {
  const graph = fileGraph(SRC);
  assert.ok((graph.get(join('serving', 'engine.ts'))?.size ?? 0) > 5, 'the imports of src/ were read file by file');
  assert.deepEqual(circlesOf(graph), [], 'files in a circle');
});

test('a circle closed by a type import is found; commented-out imports and imports within a folder are not edges', (t) => {
  const root = tempDir('affinity-folders-');
  t.after(() => rmSync(root, { recursive: true, force: true }));
  for (const folder of ['layer', 'thread', 'other']) mkdirSync(join(root, folder));
  writeFileSync(join(root, 'layer', 'keys.ts'), "import type { Engine } from '../thread/engine.ts';\nimport { x } from './own.ts';\nexport const k = 1;\n");
  writeFileSync(join(root, 'layer', 'own.ts'), 'export const x = 1;\n');
  writeFileSync(join(root, 'thread', 'engine.ts'), "import { k } from '../layer/keys.ts';\n// import { y } from '../other/y.ts';\n/* import '../other/y.ts'; */\nexport class Engine {}\n");
  writeFileSync(join(root, 'other', 'y.ts'), "export const y = await import('../layer/keys.ts');\n");
  const graph = folderGraph(root);
  assert.deepEqual(circlesOf(graph), [['layer', 'thread']]);
  assert.deepEqual(graph.get('layer')?.get('thread'), [`${join('layer', 'keys.ts')} -> ${join('thread', 'engine.ts')}`]);
  assert.equal(graph.get('thread')?.has('other'), false, 'commented-out imports are not edges');
  assert.equal(graph.get('layer')?.has('layer'), false, 'an import within a folder is not an edge');
  assert.deepEqual([...(graph.get('other')?.keys() ?? [])], ['layer'], 'a dynamic import with a literal is an edge');
});

test('the specifiers read: import, import type, export from, side-effect and dynamic imports, relative only', () => {
  const text = [
    "import { a } from './a.ts';",
    "import type { B } from '../b/b.ts';",
    "export { c } from './c.ts';",
    "export * from '../d/d.ts';",
    "import './e.mjs';",
    "const f = await import('../f/f.ts');",
    "import { readFileSync } from 'node:fs';",
    "import {\n  g,\n  h,\n} from '../g/g.ts';",
  ].join('\n');
  assert.deepEqual(importedSpecifiers(text), ['./a.ts', '../b/b.ts', './c.ts', '../d/d.ts', './e.mjs', '../f/f.ts', '../g/g.ts']);
});
