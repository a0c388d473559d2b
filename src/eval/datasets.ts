/**
 * @module eval/datasets
 * Readers of the evaluation data sets into interactions and catalog items: MovieLens 100k
 * (`u.data` ratings, `u.item` titles and genres, Latin-1), the Microsoft store sample
 * (`demoUsage.csv` purchases, `demoCatalog.csv`), and any CSV of `user,item,timestamp[,weight]`
 * (timestamps in unix seconds or ISO 8601; a header row is skipped). Reads files only.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import type { Interaction } from './split.ts';

export interface CatalogEntry {
  id: string;
  title?: string;
  categories?: string[][];
  /** ISO 8601. */
  published?: string;
}

export interface Dataset {
  name: string;
  interactions: Interaction[];
  items: CatalogEntry[];
  /** The event type the interactions are logged as (its weight comes from model.eventWeights). */
  eventType: 'item_interaction' | 'purchase';
}

const MONTHS: Record<string, string> = { Jan: '01', Feb: '02', Mar: '03', Apr: '04', May: '05', Jun: '06', Jul: '07', Aug: '08', Sep: '09', Oct: '10', Nov: '11', Dec: '12' };

/** MovieLens 100k: every rating is an `item_interaction` whose weight is the rating (1-5). */
export function readMovieLens100k(dir: string): Dataset {
  const interactions: Interaction[] = [];
  for (const line of readFileSync(join(dir, 'u.data'), 'utf8').split('\n')) {
    if (line === '') continue;
    const [user, item, rating, t] = line.split('\t');
    interactions.push({ user: user!, item: item!, t: Number(t), weight: Number(rating) });
  }
  const genres = readFileSync(join(dir, 'u.genre'), 'latin1').split('\n').filter((l) => l.includes('|')).map((l) => l.split('|')[0]!);
  const items: CatalogEntry[] = [];
  // SOURCES.md: u.item is ISO-8859-1, not UTF-8.
  for (const line of readFileSync(join(dir, 'u.item'), 'latin1').split('\n')) {
    if (line === '') continue;
    const fields = line.split('|');
    const date = /^(\d{2})-([A-Za-z]{3})-(\d{4})$/.exec(fields[2] ?? '');
    const flags = fields.slice(5);
    const categories = genres.filter((_, g) => flags[g] === '1').map((g) => [g]);
    items.push({
      id: fields[0]!,
      title: fields[1] || undefined,
      categories,
      published: date && MONTHS[date[2]!] ? `${date[3]}-${MONTHS[date[2]!]}-${date[1]}T00:00:00Z` : undefined,
    });
  }
  return { name: 'ml-100k', interactions, items, eventType: 'item_interaction' };
}

/** The Microsoft store sample: every row a `purchase`. Times (yyyy/MM/ddTHH:mm:ss) are read as UTC. */
export function readMsStoreSample(dir: string): Dataset {
  const usage = parse(readFileSync(join(dir, 'demoUsage.csv'), 'utf8'), { relax_column_count: true }) as string[][];
  const interactions = usage.map(([user, item, time]) => ({ user: user!, item: item!, t: Math.floor(Date.parse(`${time!.replaceAll('/', '-')}Z`) / 1000) }));
  const catalog = parse(readFileSync(join(dir, 'demoCatalog.csv'), 'utf8'), { relax_column_count: true }) as string[][];
  const items = catalog.map(([id, title, category]) => ({ id: id!, title, categories: category ? [[category]] : [] }));
  return { name: 'ms-store-sample', interactions, items, eventType: 'purchase' };
}

function toUnixSec(raw: string): number {
  return /^\d+(\.\d+)?$/.test(raw) ? Math.floor(Number(raw)) : Math.floor(Date.parse(raw) / 1000);
}

/** A CSV of `user,item,timestamp[,weight]`; its items are the ones it names (no metadata). */
export function readInteractionsCsv(path: string): Dataset {
  const rows = parse(readFileSync(path, 'utf8'), { relax_column_count: true, skip_empty_lines: true, trim: true }) as string[][];
  const interactions: Interaction[] = [];
  rows.forEach((row, line) => {
    const [user, item, time, weight] = row;
    const t = time === undefined ? NaN : toUnixSec(time);
    if (!user || !item || !Number.isFinite(t)) {
      if (line === 0) return; // a header row
      throw new Error(`${path}:${line + 1}: expected user,item,timestamp[,weight], got '${row.join(',')}'`);
    }
    const w = weight === undefined || weight === '' ? undefined : Number(weight);
    if (w !== undefined && !(Number.isFinite(w) && w >= 0)) throw new Error(`${path}:${line + 1}: weight '${weight}' is not a number >= 0`);
    interactions.push(w === undefined ? { user, item, t } : { user, item, t, weight: w });
  });
  const items = [...new Set(interactions.map((r) => r.item))].map((id) => ({ id }));
  return { name: path, interactions, items, eventType: 'item_interaction' };
}

/** `ml-100k`, `ms-store-sample` (from the shared datasets folder) or a path to a CSV file. */
export function readDataset(name: string, datasetsDir: string): Dataset {
  if (name === 'ml-100k') return readMovieLens100k(join(datasetsDir, 'ml-100k'));
  if (name === 'ms-store-sample') return readMsStoreSample(join(datasetsDir, 'ms-store-sample'));
  if (name.endsWith('.csv') && statSync(name, { throwIfNoEntry: false })?.isFile()) return readInteractionsCsv(name);
  throw new Error(`unknown dataset '${name}': use ml-100k, ms-store-sample or a path to a .csv file`);
}
