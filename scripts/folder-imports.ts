// The import graph between the top folders of src/ (issue 17: dependencies point from the
// threads to the shared layers, never back, so no two folders import each other in a circle),
// and between its files (no two import each other either, types included).
// Every static `import`/`export ... from`, `import type` included (a type is a dependency of the
// code's structure too), and `import('...')` with a literal: relative specifiers only, which is
// all src/ uses for its own files. Written here rather than taken from madge or
// dependency-cruiser: both pin TypeScript 5 as a peer and parse with it, and this project builds
// with TypeScript 7. Run: node --import tsx scripts/folder-imports.ts [dir] (prints the edges
// and any circle; exits 1 on one).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';

const SPECIFIER = /(?:^|[\s;}])(?:import|export)\s[^'";]*?\sfrom\s*['"](\.{1,2}\/[^'"]+)['"]|(?:^|[\s;(])import\s*(?:\(\s*)?['"](\.{1,2}\/[^'"]+)['"]/gm;
const SOURCE = /\.(?:ts|mts|mjs)$/;

/** A file's folder under `root`: its first path segment, `(top)` for files directly in it. */
export function folderOf(root: string, file: string): string {
  const parts = relative(root, file).split(sep);
  return parts.length > 1 ? parts[0]! : '(top)';
}

/** Relative specifiers a source text imports, comments aside. */
export function importedSpecifiers(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  return [...code.matchAll(SPECIFIER)].map((m) => (m[1] ?? m[2])!);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : SOURCE.test(e.name) ? [join(dir, e.name)] : []));
}

/** Node → node → the imports (file → file) that make that edge; a node is a folder or a file. */
export type ImportGraph = Map<string, Map<string, string[]>>;

export const folderGraph = (root: string): ImportGraph => importGraph(root, folderOf);
export const fileGraph = (root: string): ImportGraph => importGraph(root, (r, file) => relative(r, file));

function importGraph(root: string, nodeOf: (root: string, file: string) => string): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of sourceFiles(root)) {
    const from = nodeOf(root, file);
    for (const specifier of importedSpecifiers(readFileSync(file, 'utf8'))) {
      const target = normalize(join(dirname(file), specifier));
      if (relative(root, target).startsWith('..')) continue;
      const to = nodeOf(root, target);
      if (to === from) continue;
      if (!graph.has(from)) graph.set(from, new Map());
      const edges = graph.get(from)!;
      const link = `${relative(root, file)} -> ${relative(root, target)}`;
      const links = edges.get(to) ?? [];
      if (!links.includes(link)) edges.set(to, [...links, link]);
    }
  }
  return graph;
}

/** The groups of nodes that reach each other (strongly connected, more than one node): each is a circle. */
export function circlesOf(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const circles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      group.push(w);
      if (w === v) break;
    }
    if (group.length > 1) circles.push(group.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return circles;
}

if (process.argv[1] === import.meta.filename) {
  const root = process.argv[2] ?? join(import.meta.dirname, '..', 'src');
  const graph = folderGraph(root);
  for (const [from, edges] of [...graph].sort()) for (const [to, imports] of [...edges].sort()) console.log(`${from} -> ${to} (${imports.length})`);
  const circles = circlesOf(graph);
  for (const circle of circles) console.log(`circle: ${circle.join(', ')}`);
  const fileCircles = circlesOf(fileGraph(root));
  for (const circle of fileCircles) console.log(`file circle: ${circle.join(', ')}`);
  process.exit(circles.length + fileCircles.length > 0 ? 1 : 0);
}
