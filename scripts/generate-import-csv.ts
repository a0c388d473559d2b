// A seeded CSV file drop for benchmarks and load tests (same seed, same bytes):
//   npx tsx scripts/generate-import-csv.ts [--rows 1000000] [--seed 42] [--out import.csv] [--environment demo]
// Rows: 95% ADD of new articles and videos (title, description, uri, category paths, tags,
// language, publication time, an author attribute), 3% UPDATE of an earlier row's title, 1%
// DELETE of an earlier item, 1% invalid (an unknown item type or a timestamp without zone, so
// the report has rows to list). Nested fields are JSON strings, as SPEC.md says for CSV.
// Streams to the file: memory stays flat whatever --rows is.
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { mulberry32, pick, pickIndex } from './synthetic/random.ts';
import { TAXONOMY } from './synthetic/taxonomy.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    seed: { type: 'string', default: '42' },
    out: { type: 'string', default: 'import.csv' },
    environment: { type: 'string', default: 'demo' },
  },
});
const rows = Number(values.rows);
const random = mulberry32(Number(values.seed));
const HEADER = 'operation,environment,item_id,item_type,title,description,uri,categories,tags,language,publication_datetime,item_attributes';
const AUTHORS = ['Ann Lee', 'Bo Chen', 'Cy Diaz', 'Dee Okafor', 'Eli Novak', 'Fay Ito', 'Gus Berg', 'Hal Moreau'];
const START = Date.UTC(2024, 0, 1) / 1000;

/** Quotes a CSV cell when it needs it (RFC 4180). */
function cell(value: string): string {
  return /[",\n\r]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

function words(list: readonly string[], n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(pick(random, list));
  return out.join(' ');
}

/** The id of the n-th ADD (0-based). */
const idOf = (n: number) => `gen-${n.toString(36).padStart(6, '0')}`;

export function generateRow(env: string, added: number): { line: string; adds: boolean } {
  const roll = random();
  const top = pick(random, TAXONOMY);
  if (roll < 0.03 && added > 0) {
    const id = idOf(pickIndex(random, added));
    return { line: ['UPDATE', env, id, id.endsWith('0') ? 'video' : 'article', cell(`Updated: ${words(top.words, 5)}`), '', '', '', '', '', '', ''].join(','), adds: false };
  }
  if (roll < 0.04 && added > 0) {
    const id = idOf(pickIndex(random, added));
    return { line: ['DELETE', env, id, id.endsWith('0') ? 'video' : 'article', '', '', '', '', '', '', '', ''].join(','), adds: false };
  }
  const id = idOf(added);
  const itemType = id.endsWith('0') ? 'video' : 'article';
  const sub = pick(random, top.subcategories);
  const published = new Date((START + pickIndex(random, 365 * 86400)) * 1000).toISOString();
  const invalid = roll > 0.99;
  const line = [
    'ADD',
    env,
    id,
    invalid && roll > 0.995 ? 'podcast' : itemType,
    cell(words(top.words, 6)),
    cell(`${words(top.words, 12)}, ${words(top.words, 8)}.`),
    `https://example.com/${top.name}/${sub}/${id}`,
    cell(JSON.stringify([[top.name], [top.name, sub]])),
    cell(JSON.stringify([pick(random, top.words), pick(random, top.words)])),
    'en',
    invalid && roll <= 0.995 ? published.slice(0, 19) : published,
    cell(JSON.stringify({ author: pick(random, AUTHORS) })),
  ].join(',');
  return { line, adds: true };
}

const out = createWriteStream(values.out);
let buffer = `${HEADER}\n`;
let added = 0;
for (let i = 0; i < rows; i++) {
  const row = generateRow(values.environment, added);
  if (row.adds) added++;
  buffer += `${row.line}\n`;
  if (buffer.length > 1 << 20) {
    if (!out.write(buffer)) await once(out, 'drain');
    buffer = '';
  }
}
out.end(buffer);
await once(out, 'finish');
console.error(`wrote ${rows} rows (${added} ADD) to ${values.out}`);
