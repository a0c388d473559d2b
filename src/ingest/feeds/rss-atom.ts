/**
 * @module ingest/feeds/rss-atom
 * RSS (2.0, 1.0, 0.9x) and Atom (1.0, 0.3) documents → Item candidates, through rss-parser, with
 * SPEC.md's RSS table: guid → item_id (else link), link → uri, dc:creator → item_attributes.author,
 * pubDate → publication_datetime, category → categories (single-level), description →
 * description, item `image` and `media:content` url → images; also content:encoded →
 * content_body. Atom: id, link rel=alternate, author name(s), published (else updated), category
 * term, summary (else content) → description, content → content_body. The format is detected by
 * the root element. rss-parser is wrapped where it would throw on valid-but-unusual input (an RSS
 * root without channel, an Atom link without attributes, an unparseable Atom date), so one odd
 * entry is a rejected entry, not a failed feed.
 */
import Parser from 'rss-parser';
import { SaxesParser } from 'saxes';
import type { DisableMarker } from '../../domain/feed.ts';
import { toTimestamp, type Candidate } from '../normalize.ts';
import { FeedParseError, type ParsedFeed, type ParsedEntry } from './parsed-feed.ts';

type Raw = Record<string, unknown>;

/** Text of an xml2js value: a string, or an element object's `_`. */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim();
  if (value !== null && typeof value === 'object' && typeof (value as Raw)._ === 'string') return ((value as Raw)._ as string).trim();
  return undefined;
}

function attrsOf(value: unknown): Record<string, string> {
  if (value === null || typeof value !== 'object') return {};
  const attrs = (value as Raw).$;
  return attrs !== null && typeof attrs === 'object' ? (attrs as Record<string, string>) : {};
}

function asArray(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

/**
 * rss-parser with its fragile spots made safe (see the module header). Its methods are not in
 * its type declarations, so the overrides reach them through `any`-free casts of the prototype.
 */
interface ParserInternals {
  buildAtomFeed(xml: Raw): Raw;
  parseItemAtom(entry: Raw): Raw;
  buildRSS2(xml: Raw): Raw;
  buildRSS1(xml: Raw): Raw;
  buildRSS0_9(xml: Raw): Raw;
}

function withUsableLinks(node: Raw): Raw {
  if (!Array.isArray(node.link)) return node;
  return { ...node, link: node.link.filter((l) => typeof attrsOf(l).href === 'string') };
}

function makeParser(markerField: string | undefined): Parser {
  const item: Array<[string, string, { keepArray: boolean }]> = [
    ['category', 'rawCategories', { keepArray: true }],
    ['media:content', 'mediaContent', { keepArray: true }],
    ['media:thumbnail', 'mediaThumbnail', { keepArray: true }],
    ['media:group', 'mediaGroup', { keepArray: true }],
    ['image', 'rawImage', { keepArray: true }],
    ['author', 'rawAuthors', { keepArray: true }],
    ['dc:creator', 'rawCreators', { keepArray: true }],
    ['pubDate', 'rawPubDate', { keepArray: true }],
    ['dc:date', 'rawDcDate', { keepArray: true }],
    ['content', 'rawContent', { keepArray: true }],
  ];
  if (markerField !== undefined) item.push([markerField, 'rawMarker', { keepArray: true }]);
  const parser = new Parser({ defaultRSS: 2, customFields: { item } });
  const internals = parser as unknown as ParserInternals;
  const proto = Object.getPrototypeOf(parser) as ParserInternals;
  internals.parseItemAtom = (entry: Raw) => {
    // Dates are read raw here: rss-parser's own conversion throws on a bad one, failing the feed.
    const { published, updated, ...rest } = withUsableLinks(entry);
    return { ...proto.parseItemAtom.call(parser, rest), rawPublished: published, rawUpdated: updated };
  };
  internals.buildAtomFeed = (xml: Raw) => proto.buildAtomFeed.call(parser, { ...xml, feed: withUsableLinks(xml.feed as Raw) });
  const noChannel = (build: (xml: Raw) => Raw, root: string) => (xml: Raw) => {
    const node = xml[root] as Raw | undefined;
    const channel = node && typeof node === 'object' ? node.channel : undefined;
    return Array.isArray(channel) && channel.length > 0 ? build.call(parser, xml) : { items: [] };
  };
  internals.buildRSS2 = noChannel(proto.buildRSS2, 'rss');
  internals.buildRSS0_9 = noChannel(proto.buildRSS0_9, 'rss');
  internals.buildRSS1 = noChannel(proto.buildRSS1, 'rdf:RDF');
  return parser;
}

/** What the root element says the document is; throws FeedParseError when it is no feed. */
function detectFormat(text: string): string {
  const sniff = new SaxesParser({ position: true });
  let root: { name: string; attributes: Record<string, string> } | undefined;
  const STOP = new Error('stop');
  sniff.on('error', (err) => {
    throw new FeedParseError(`not well-formed XML: ${err.message}`);
  });
  sniff.on('opentag', (tag) => {
    root = { name: tag.name, attributes: tag.attributes as Record<string, string> };
    throw STOP;
  });
  try {
    sniff.write(text).close();
  } catch (err) {
    if (err !== STOP) throw err instanceof FeedParseError ? err : new FeedParseError(`not well-formed XML: ${(err as Error).message}`);
  }
  if (!root) throw new FeedParseError(text.trim() === '' ? 'the body is empty' : 'the body has no XML root element');
  const version = root.attributes.version;
  if (root.name === 'rss') return version ? `rss${version}` : 'rss';
  if (root.name === 'rdf:RDF') return 'rss1.0';
  if (root.name === 'feed') return version ? `atom${version}` : 'atom1.0';
  throw new FeedParseError(`the root element <${root.name}> is not rss, rdf:RDF or feed (Atom)`);
}

function categoriesOf(entry: Raw, marker: DisableMarker | undefined): string[] {
  const out = new Set<string>();
  for (const c of asArray(entry.rawCategories)) {
    const text = textOf(c) || attrsOf(c).term?.trim() || attrsOf(c).label?.trim();
    if (text && !(marker?.field === 'category' && text === marker.value)) out.add(text);
  }
  return [...out];
}

const IMAGE_EXTENSION = /\.(avif|bmp|gif|jpe?g|png|svg|webp)([?#]|$)/i;

/** media:content counts as an image when it says so, or says nothing and its URL looks like one. */
function isImageMedia(attrs: Record<string, string>): boolean {
  if (attrs.medium) return attrs.medium === 'image';
  if (attrs.type) return attrs.type.startsWith('image/');
  return IMAGE_EXTENSION.test(attrs.url ?? '');
}

function imagesOf(entry: Raw): string[] {
  const out = new Set<string>();
  for (const image of asArray(entry.rawImage)) {
    const url = textOf(image) || textOf(asArray((image as Raw | undefined)?.url)[0]) || attrsOf(image).href || attrsOf(image).url;
    if (url) out.add(url);
  }
  const media = [...asArray(entry.mediaContent), ...asArray(entry.mediaThumbnail).map((t) => ({ $: { medium: 'image', ...attrsOf(t) } }))];
  for (const group of asArray(entry.mediaGroup)) {
    media.push(...asArray((group as Raw)['media:content']));
    media.push(...asArray((group as Raw)['media:thumbnail']).map((t) => ({ $: { medium: 'image', ...attrsOf(t) } })));
  }
  for (const m of media) {
    const attrs = attrsOf(m);
    if (attrs.url && isImageMedia(attrs)) out.add(attrs.url.trim());
  }
  const enclosure = entry.enclosure as { url?: string; type?: string } | undefined;
  if (enclosure?.url && enclosure.type?.startsWith('image/')) out.add(enclosure.url.trim());
  // The Item schema keeps at most 50 images; more are dropped rather than refusing the entry.
  return [...out].filter((u) => u !== '').slice(0, 50);
}

function authorsOf(entry: Raw, atom: boolean): string | undefined {
  const names: string[] = [];
  if (atom) {
    for (const a of asArray(entry.rawAuthors)) {
      const name = textOf(asArray((a as Raw | undefined)?.name)[0]);
      if (name) names.push(name);
    }
  } else {
    for (const c of asArray(entry.rawCreators)) {
      const name = textOf(c);
      if (name) names.push(name);
    }
    if (names.length === 0) {
      const author = textOf(asArray(entry.rawAuthors)[0]);
      if (author) names.push(author);
    }
  }
  return names.length > 0 ? [...new Set(names)].join(', ') : undefined;
}

function markerSet(entry: Raw, marker: DisableMarker | undefined): boolean {
  if (!marker) return false;
  const values = marker.field === 'category' ? asArray(entry.rawCategories) : asArray(entry.rawMarker);
  return values.some((v) => (textOf(v) ?? attrsOf(v).term?.trim()) === marker.value);
}

function toEntry(
  entry: Raw,
  index: number,
  atom: boolean,
  language: string | undefined,
  marker: DisableMarker | undefined,
  unreadableDates: string[],
): ParsedEntry {
  const candidate: Candidate = {};
  const guid = atom ? textOf(entry.id) : textOf(entry.guid) ?? textOf(entry['rdf:about']);
  const link = textOf(entry.link);
  const itemId = guid || link;
  if (!itemId) return { entry: index, reason: atom ? 'has no id or link to identify it' : 'has no guid or link to identify it' };
  candidate.item_id = itemId;
  const title = textOf(entry.title);
  if (title) candidate.title = title;
  if (link) candidate.uri = link;
  const author = authorsOf(entry, atom);
  if (author) candidate.item_attributes = { author };
  const rawDate = atom
    ? textOf(asArray(entry.rawPublished)[0]) || textOf(asArray(entry.rawUpdated)[0])
    : textOf(asArray(entry.rawPubDate)[0]) || textOf(asArray(entry.rawDcDate)[0]);
  if (rawDate) {
    // An unreadable date (feeds write localised names: 'Seg, 24 Set 2018') drops only that field;
    // the poll reports it as a warning rather than refusing an otherwise good entry.
    const time = toTimestamp(rawDate);
    if ('iso' in time) candidate.publication_datetime = time.iso;
    else unreadableDates.push(rawDate);
  }
  const categories = categoriesOf(entry, marker);
  if (categories.length > 0) candidate.categories = categories;
  const summary = textOf(atom ? entry.summary : entry.content);
  const body = atom ? textOf(entry.content) : textOf(entry['content:encoded']);
  const description = summary || (atom ? body : undefined);
  if (description) candidate.description = description;
  if (body) candidate.content_body = body;
  const images = imagesOf(entry);
  if (images.length > 0) candidate.images = images;
  const entryLanguage = textOf(entry.language) || language;
  if (entryLanguage) candidate.language = entryLanguage;
  return { entry: index, candidate, disabled: markerSet(entry, marker) };
}

/** Parses an RSS or Atom document into entries; throws FeedParseError when it is not one. */
export async function parseRssAtom(body: string, marker: DisableMarker | undefined): Promise<ParsedFeed> {
  // Whitespace before the XML declaration is not well-formed, but common and harmless.
  const text = body.trimStart();
  const detectedFormat = detectFormat(text);
  const atom = detectedFormat.startsWith('atom');
  let feed: { items: Raw[]; language?: unknown };
  try {
    feed = (await makeParser(marker?.field === 'category' ? undefined : marker?.field).parseString(text)) as unknown as typeof feed;
  } catch (err) {
    throw new FeedParseError(`not a readable ${atom ? 'Atom' : 'RSS'} document: ${(err as Error).message.split('\n').join(' ')}`);
  }
  const language = textOf(feed.language);
  const warnings: string[] = [];
  if (!atom && feed.items.length === 0 && !/<channel[\s>]/.test(text)) warnings.push('the document has no <channel>: no entries');
  const unreadableDates: string[] = [];
  const entries = feed.items.map((entry, i) => toEntry(entry, i + 1, atom, language, marker, unreadableDates));
  if (unreadableDates.length > 0) {
    warnings.push(`${unreadableDates.length} entr${unreadableDates.length === 1 ? 'y has' : 'ies have'} an unreadable date (e.g. '${unreadableDates[0]!.slice(0, 64)}'): applied without publication_datetime`);
  }
  return { detectedFormat, warnings, entries };
}
