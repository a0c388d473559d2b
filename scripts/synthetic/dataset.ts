// The seeded synthetic data set: a catalog of items over a fixed taxonomy and a stream of events
// with structure for the models to find. Pure and deterministic: the same options give the same
// items and events, byte for byte, on every run (mulberry32 sub-streams, no Math.random, no clock).
// Items and events are generated lazily; the only arrays are a few typed ones per item and user.
//
// Shape of the data:
// - items: item type and category uniform; one [top, sub] category path plus its top, and a
//   second path for 15%; titles and descriptions drawn mostly from the top category's words;
//   publication times over the 365 days before `nowSec`, denser toward `nowSec`.
// - popularity: Zipf (s = 1) over a random ranking of the items, so popular items are spread
//   over the ids; sampled per category by binary search on cumulative weights.
// - users: Pareto-distributed activity; each prefers 1–3 top categories, and 85% of their views
//   land there (the rest follow global popularity), so co-occurrence follows categories.
// - events: sessions of 1–12 detail_pageviews; a view of a product adds to cart (20%), a cart
//   turns into a purchase (50%); other views may be liked (item_interaction, 15%). About 83% of
//   the events are page views. The events carry no timestamp: SPEC.md's event fields have none,
//   and the service stamps acceptance time itself.
//
// Use: `for (const item of generateItems(DEFAULT_OPTIONS))`, `for (const batch of
// generateEventBatches(opts, 100))`; scripts/synthetic/load.ts sends them to a server.
import type { TrackedEvent } from '../../src/domain/event.ts';
import type { Item } from '../../src/domain/item.ts';
import { FILLER_WORDS, TAGS, TAXONOMY } from './taxonomy.ts';
import { permutation, pick, pickIndex, searchCumulative, stream, type Random } from './random.ts';

export interface DatasetOptions {
  seed: number;
  items: number;
  users: number;
  events: number;
  environment: string;
  /** Must be item types of `environment`; `product` items also get carts and purchases. */
  itemTypes: string[];
  /** The data set's "now" (Unix seconds): publication times lie in the year before it. */
  nowSec: number;
  /** Give each event an `event_id` (`s{seed}-e{n}`) so loading twice stores the events once. Default true. */
  eventIds?: boolean;
}

export const DEFAULT_OPTIONS: Readonly<DatasetOptions> = Object.freeze({
  seed: 42,
  items: 100_000,
  users: 50_000,
  events: 1_000_000,
  environment: 'demo',
  itemTypes: ['article', 'video', 'product'],
  nowSec: Date.UTC(2026, 10, 1) / 1000,
  eventIds: true,
});

/** One sub-stream per purpose: a change in how items are written never moves the events. */
const STREAM_LAYOUT = 1;
const STREAM_ITEMS = 2;
const STREAM_POPULARITY = 3;
const STREAM_USERS = 4;
const STREAM_EVENTS = 5;

const ZIPF_S = 1.0;
const SECOND_PATH_SHARE = 0.15;
const PUBLICATION_SPAN_SEC = 365 * 86_400;
const PREFERRED_SHARE = 0.85;
const MAX_PREFERENCES = 3;
/** Pareto tail index of user activity; the cap keeps one user from dominating a small data set. */
const ACTIVITY_ALPHA = 1.5;
const ACTIVITY_CAP = 100;
const MEAN_SESSION_VIEWS = 3;
const MAX_SESSION_VIEWS = 12;
const LIKE_RATE = 0.15;
const CART_RATE = 0.2;
const PURCHASE_RATE = 0.5;
const CHANNEL = 'www';
const STANDARD_DETAIL_PAGES = new Set(['article', 'video', 'product']);

/** Per item index: its item type and primary category, drawn once for items and events alike. */
interface Layout {
  typeIx: Uint8Array;
  topIx: Uint8Array;
  subIx: Uint8Array;
}

function buildLayout(opts: DatasetOptions): Layout {
  if (opts.itemTypes.length === 0 || opts.itemTypes.length > 255) throw new Error('itemTypes must hold 1 to 255 types');
  const random = stream(opts.seed, STREAM_LAYOUT);
  const layout = { typeIx: new Uint8Array(opts.items), topIx: new Uint8Array(opts.items), subIx: new Uint8Array(opts.items) };
  for (let ix = 0; ix < opts.items; ix++) {
    layout.typeIx[ix] = pickIndex(random, opts.itemTypes.length);
    const top = pickIndex(random, TAXONOMY.length);
    layout.topIx[ix] = top;
    layout.subIx[ix] = pickIndex(random, TAXONOMY[top]!.subcategories.length);
  }
  return layout;
}

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/** `count` words: mostly the category's, some its subcategory's name, the rest filler. */
function words(random: Random, top: number, sub: number, count: number): string[] {
  const category = TAXONOMY[top]!;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const r = random();
    if (r < 0.7) out.push(pick(random, category.words));
    else if (r < 0.8) out.push(category.subcategories[sub]!);
    else out.push(pick(random, FILLER_WORDS));
  }
  return out;
}

function categoriesOf(random: Random, top: number, sub: number): string[][] {
  const category = TAXONOMY[top]!;
  const paths = [[category.name, category.subcategories[sub]!], [category.name]];
  if (random() < SECOND_PATH_SHARE) {
    const other = TAXONOMY[(top + 1 + pickIndex(random, TAXONOMY.length - 1)) % TAXONOMY.length]!;
    paths.push([other.name, pick(random, other.subcategories)]);
  }
  return paths;
}

function tagsOf(random: Random): string[] {
  const count = pickIndex(random, 5);
  const tags = new Set<string>();
  for (let i = 0; i < count; i++) tags.add(pick(random, TAGS));
  return [...tags];
}

function publicationOf(random: Random, nowSec: number): string {
  // Squaring a uniform draw puts half the items in the most recent quarter of the year.
  const u = random();
  const ageSec = Math.floor(u * u * PUBLICATION_SPAN_SEC);
  return new Date((nowSec - ageSec) * 1000).toISOString().replace('.000Z', 'Z');
}

/** The items of the data set, `i0` … `i{items-1}`, as PUT bodies (SPEC.md Item). */
export function* generateItems(opts: DatasetOptions): Generator<Item> {
  const layout = buildLayout(opts);
  const random = stream(opts.seed, STREAM_ITEMS);
  for (let ix = 0; ix < opts.items; ix++) {
    const top = layout.topIx[ix]!;
    const sub = layout.subIx[ix]!;
    const title = words(random, top, sub, 4 + pickIndex(random, 6));
    title[0] = capitalize(title[0]!);
    const description = words(random, top, sub, 12 + pickIndex(random, 19));
    description[0] = capitalize(description[0]!);
    yield {
      environment: opts.environment,
      item_id: `i${ix}`,
      item_type: opts.itemTypes[layout.typeIx[ix]!]!,
      title: title.join(' '),
      description: `${description.join(' ')}.`,
      categories: categoriesOf(random, top, sub),
      tags: tagsOf(random),
      publication_datetime: publicationOf(random, opts.nowSec),
      language: 'en',
    };
  }
}

/** Items grouped by top category, each group in popularity order with its cumulative weights. */
interface Popularity {
  /** Group c spans [groupStart[c], groupStart[c + 1]) of `items` and `cum`. */
  groupStart: Uint32Array;
  items: Uint32Array;
  cum: Float64Array;
  /** All items in popularity order with cumulative weights, for views outside a user's taste. */
  allItems: Uint32Array;
  allCum: Float64Array;
}

function buildPopularity(opts: DatasetOptions, layout: Layout): Popularity {
  const allItems = permutation(stream(opts.seed, STREAM_POPULARITY), opts.items);
  const allCum = new Float64Array(opts.items);
  const groupStart = new Uint32Array(TAXONOMY.length + 1);
  for (let ix = 0; ix < opts.items; ix++) groupStart[layout.topIx[ix]! + 1]!++;
  for (let c = 0; c < TAXONOMY.length; c++) groupStart[c + 1]! += groupStart[c]!;
  const fill = groupStart.slice(0, TAXONOMY.length);
  const items = new Uint32Array(opts.items);
  const cum = new Float64Array(opts.items);
  let total = 0;
  for (let rank = 0; rank < opts.items; rank++) {
    const ix = allItems[rank]!;
    const weight = 1 / Math.pow(rank + 1, ZIPF_S);
    total += weight;
    allCum[rank] = total;
    const c = layout.topIx[ix]!;
    const at = fill[c]!++;
    items[at] = ix;
    // Within a group, cumulate from its own start: the group's first entry holds its own weight.
    cum[at] = (at > groupStart[c]! ? cum[at - 1]! : 0) + weight;
  }
  return { groupStart, items, cum, allItems, allCum };
}

/** Per user: activity weight (cumulative) and preferred top categories. */
interface Users {
  activityCum: Float64Array;
  preferences: Uint8Array;
  preferenceCount: Uint8Array;
}

function buildUsers(opts: DatasetOptions): Users {
  const random = stream(opts.seed, STREAM_USERS);
  const users: Users = {
    activityCum: new Float64Array(opts.users),
    preferences: new Uint8Array(opts.users * MAX_PREFERENCES),
    preferenceCount: new Uint8Array(opts.users),
  };
  let total = 0;
  for (let u = 0; u < opts.users; u++) {
    total += Math.min(ACTIVITY_CAP, Math.pow(1 - random(), -1 / ACTIVITY_ALPHA));
    users.activityCum[u] = total;
    const count = 1 + pickIndex(random, MAX_PREFERENCES);
    const base = u * MAX_PREFERENCES;
    for (let k = 0; k < count; k++) {
      // Redraw until distinct: at most 3 of 10 categories, so a couple of draws at most.
      let c = pickIndex(random, TAXONOMY.length);
      while (users.preferences.subarray(base, base + k).includes(c)) c = pickIndex(random, TAXONOMY.length);
      users.preferences[base + k] = c;
    }
    users.preferenceCount[u] = count;
  }
  return users;
}

interface EventContext {
  opts: DatasetOptions;
  layout: Layout;
  popularity: Popularity;
  users: Users;
  random: Random;
  productTypeIx: number;
}

function sampleUser(ctx: EventContext): number {
  const cum = ctx.users.activityCum;
  return searchCumulative(cum, 0, cum.length, ctx.random() * cum[cum.length - 1]!);
}

function sampleGlobal(p: Popularity, random: Random): number {
  return p.allItems[searchCumulative(p.allCum, 0, p.allCum.length, random() * p.allCum[p.allCum.length - 1]!)]!;
}

function sampleItem(ctx: EventContext, user: number): number {
  const { popularity: p, users, random } = ctx;
  if (random() >= PREFERRED_SHARE) return sampleGlobal(p, random);
  const c = users.preferences[user * MAX_PREFERENCES + pickIndex(random, users.preferenceCount[user]!)]!;
  const start = p.groupStart[c]!;
  const end = p.groupStart[c + 1]!;
  // A category without items (tiny data sets) falls back to global popularity.
  if (end === start) return sampleGlobal(p, random);
  return p.items[searchCumulative(p.cum, start, end, random() * p.cum[end - 1]!)]!;
}

/** Unit price in currency units with cents, fixed per item so repeated purchases agree. */
function priceOf(seed: number, ix: number): number {
  const r = stream(seed ^ ix, STREAM_EVENTS)();
  return Math.round((2 + r * r * 300) * 100) / 100;
}

/** The events of one view of item `ix` by `user`, appended to `out`. */
function viewEvents(ctx: EventContext, user: number, ix: number, out: TrackedEvent[]): void {
  const { opts, random } = ctx;
  const typeIx = ctx.layout.typeIx[ix]!;
  const itemType = opts.itemTypes[typeIx]!;
  const visit = {
    page_type: STANDARD_DETAIL_PAGES.has(itemType) ? `${itemType}_detail` : 'detail',
    device_id: `d${user}`,
    user_id: `u${user}`,
    channel: CHANNEL,
    action_item: `i${ix}`,
    action_item_type: itemType,
  };
  out.push({ event_type: 'detail_pageview', ...visit });
  if (typeIx !== ctx.productTypeIx) {
    if (random() < LIKE_RATE) out.push({ event_type: 'item_interaction', ...visit, interaction_type: 'like' });
    return;
  }
  if (random() >= CART_RATE) return;
  const amount = random() < 0.8 ? 1 : 2 + pickIndex(random, 3);
  out.push({ event_type: 'add_to_cart', ...visit, amount });
  if (random() >= PURCHASE_RATE) return;
  // SPEC.md leaves open whether purchased_price is per unit; here it is the total paid.
  const price = Math.round(priceOf(opts.seed, ix) * amount * 100) / 100;
  const { page_type: _, ...purchase } = visit;
  const discounted = random() < 0.2;
  out.push({
    event_type: 'purchase',
    ...purchase,
    amount,
    purchased_price: discounted ? Math.round(price * 80) / 100 : price,
    ...(discounted ? { original_price: price } : {}),
  });
}

/**
 * The `events` events of the data set in batches of `batchSize` (the last may be shorter), in
 * the order a site would send them: sessions of one user at a time. Each event passes
 * src/domain/event.ts `checkEvent` for an environment with the standard page types and channels.
 */
export function* generateEventBatches(opts: DatasetOptions, batchSize = 100): Generator<TrackedEvent[]> {
  if (opts.items <= 0 || opts.users <= 0) throw new Error('items and users must be positive to generate events');
  const layout = buildLayout(opts);
  const ctx: EventContext = {
    opts,
    layout,
    popularity: buildPopularity(opts, layout),
    users: buildUsers(opts),
    random: stream(opts.seed, STREAM_EVENTS),
    productTypeIx: opts.itemTypes.indexOf('product'),
  };
  const withIds = opts.eventIds ?? true;
  const session: TrackedEvent[] = [];
  let batch: TrackedEvent[] = [];
  let n = 0;
  while (n < opts.events) {
    const user = sampleUser(ctx);
    // Geometric session length with mean MEAN_SESSION_VIEWS.
    const views = Math.min(MAX_SESSION_VIEWS, 1 + Math.floor(-Math.log(1 - ctx.random()) * (MEAN_SESSION_VIEWS - 1)));
    session.length = 0;
    for (let v = 0; v < views; v++) viewEvents(ctx, user, sampleItem(ctx, user), session);
    for (let i = 0; i < session.length && n < opts.events; i++, n++) {
      const event = session[i]!;
      if (withIds) event.event_id = `s${opts.seed}-e${n}`;
      batch.push(event);
      if (batch.length === batchSize) {
        yield batch;
        batch = [];
      }
    }
  }
  if (batch.length > 0) yield batch;
}
