// Every feed file of ../shared/datasets/feeds/ polled by the real service from a local HTTP
// server: the well-formed ones apply (SPEC.md's RSS table, Atom's equivalents, their declared,
// served and BOM encodings), the broken ones are a clean poll error that changes nothing, and
// the service keeps serving throughout. Mapped items are checked field by field for a sample.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { apiClient, type Api } from '../helpers/api.ts';
import { getToken } from '../helpers/auth.ts';
import { corpusFiles, startFeedServer, type FeedServer } from '../helpers/feed-server.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { readChanges } from '../helpers/store-snapshot.ts';

interface Status {
  state: string;
  entries_seen: number;
  entries_applied: number;
  entries_rejected: number;
  entries_unchanged: number;
  created: number;
  detected_format: string | null;
  encoding: string | null;
  last_error: string | null;
  warnings: string[];
  rejected_entries: Array<{ entry: number; item_id: string | null; reason: string }>;
}

/** Files that are not well-formed feeds: each must be a parse error, nothing else. */
const BROKEN = new Map([
  ['feedparser/tests/encoding/bozo_invalid-bytes-with-bom.xml', /parse: not a readable RSS document: Unclosed root tag/],
  ['gofeed/testdata/parser/rss/issue_305_bare_ampersand.xml', /parse: not a readable RSS document: Invalid character in entity name/],
  ['gofeed/testdata/parser/rss/issue_320_legacy_entity_prefix.xml', /parse: not a readable RSS document: Invalid character in entity name/],
  ['gofeed/testdata/parser/universal/empty_feed.xml', /parse: not well-formed XML: .*root element/],
  ['gofeed/testdata/parser/universal/unknown_feed.xml', /parse: the root element <note> is not rss, rdf:RDF or feed/],
  ['rss-parser/test/input/unrecognized.rss', /parse: the root element <head> is not rss, rdf:RDF or feed/],
]);

let server: TestServer;
let feeds: FeedServer;
let api: Api;
const statuses = new Map<string, Status>();

before(async () => {
  feeds = await startFeedServer();
  // The feed server is on loopback, which the outbound guard refuses unless allowed.
  server = await startServer({ config: { environments: { demo: { itemTypes: ['article', 'video', 'product'], outbound: { allow: ['127.0.0.1'] } } } } });
  api = apiClient(server, await getToken(server));
});
after(async () => {
  await server?.close();
  await feeds?.close();
});

test('every corpus feed polls to applied, or to a clean parse error that changes nothing', async () => {
  const files = corpusFiles();
  assert.ok(files.length >= 200, `the corpus has its ${files.length} feed files`);
  for (const [i, file] of files.entries()) {
    const created = await api('POST', '/api/demo/feeds', { feed_id: `c${i}`, url: `${feeds.url}/files/${file}`, format: 'rss', item_type: 'article' });
    assert.equal(created.status, 201, created.text);
    const changesBefore = BROKEN.has(file) ? (await readChanges(server.dataDir)).length : 0;
    const polled = await api<{ status: Status }>('POST', `/api/demo/feeds/c${i}/poll`);
    assert.equal(polled.status, 200, `${file}: ${polled.text}`);
    const status = polled.body.status;
    statuses.set(file, status);
    const broken = BROKEN.get(file);
    if (broken) {
      assert.equal(status.state, 'error', file);
      assert.match(status.last_error ?? '', broken, file);
      assert.equal(status.entries_seen, 0, file);
      assert.equal(status.entries_applied, 0, file);
      assert.equal((await readChanges(server.dataDir)).length, changesBefore, `${file}: a broken feed changes nothing`);
    } else {
      assert.equal(status.state, 'applied', `${file}: ${status.last_error}`);
      assert.equal(status.last_error, null, file);
      assert.equal(status.entries_seen, status.entries_applied + status.entries_rejected + status.entries_unchanged, file);
      for (const r of status.rejected_entries) assert.ok(r.reason.length > 0, `${file}: a rejected entry says why`);
    }
  }
  const health = await fetch(`${server.url}/health`);
  assert.equal(health.status, 200, 'the service is still up');
  const applied = [...statuses.values()].filter((s) => s.state === 'applied').length;
  assert.equal(applied, files.length - BROKEN.size);
});

test('encodings: BOMs, UTF-16/32 without a BOM, XML declarations and Content-Type charsets are honoured', () => {
  const encoding = (file: string) => statuses.get(file)?.encoding;
  assert.equal(encoding('feedparser/tests/encoding/utf-8-bom.xml'), 'utf-8');
  assert.equal(encoding('feedparser/tests/encoding/utf-16le-bom.xml'), 'utf-16le');
  assert.equal(encoding('feedparser/tests/encoding/utf-16be-autodetect.xml'), 'utf-16be');
  assert.equal(encoding('feedparser/tests/encoding/utf-32le-bom.xml'), 'utf-32le');
  assert.equal(encoding('feedparser/tests/encoding/utf-32be-autodetect.xml'), 'utf-32be');
  assert.equal(encoding('feedparser/tests/encoding/big5.xml'), 'big5');
  assert.equal(encoding('feedparser/tests/encoding/euc-kr-attribute.xml'), 'euc-kr');
  // Served with `Content-type: text/xml; charset=windows-1252`, no declaration in the file.
  assert.equal(encoding('feedparser/tests/encoding/http_text_xml_charset_2.xml'), 'windows-1252');
  // Declared iso-8859-1 in the file, served with charset us-ascii: the charset wins (RFC 7303).
  assert.equal(encoding('feedparser/tests/encoding/http_application_xml_charset_overrides_encoding.xml'), 'windows-1252');
  assert.equal(encoding('rss-parser/test/input/encoding.rss'), 'windows-1252');
  const bogus = statuses.get('feedparser/tests/encoding/bozo_bogus_encoding.xml')!;
  assert.equal(bogus.state, 'applied');
  assert.match(bogus.warnings.join(' '), /unknown encoding 'bogus'/);
  assert.equal(statuses.get('rss-parser/test/input/heise.atom')?.detected_format, 'atom1.0');
  assert.equal(statuses.get('rss-parser/test/input/craigslist.rss')?.detected_format, 'rss1.0');
  assert.equal(statuses.get('rss-parser/test/input/heraldsun.rss')?.detected_format, 'rss0.92');
});

async function item(id: string): Promise<Record<string, unknown>> {
  const res = await api('GET', `/api/demo/items/article/${encodeURIComponent(id)}`);
  assert.equal(res.status, 200, `${id}: ${res.text}`);
  return res.body;
}

test('RSS 2.0 maps as SPEC.md: guid, link, dc:creator, pubDate, category, description, media:content (guardian.rss)', async () => {
  const status = statuses.get('rss-parser/test/input/guardian.rss')!;
  assert.equal(status.entries_seen, 55);
  assert.equal(status.created, 55);
  const id = 'https://www.theguardian.com/us-news/2018/jan/31/donald-trump-state-of-the-union-address-unity-discord';
  const got = await item(id);
  assert.equal(got.environment, 'demo');
  assert.equal(got.item_type, 'article');
  assert.equal(got.item_id, id);
  assert.equal(got.title, 'Trump State of the Union address promised unity but emphasized discord');
  assert.equal(got.uri, id);
  assert.deepEqual(got.item_attributes, { author: 'David Smith in Washington' });
  assert.equal(got.publication_datetime, '2018-01-31T07:26:05.000Z');
  assert.deepEqual(got.categories, [
    ['Donald Trump'],
    ['State of the Union address'],
    ['US news'],
    ['US politics'],
    ['Democrats'],
    ['Republicans'],
    ['US Congress'],
  ]);
  assert.match(got.description as string, /^<p>The president’s ‘new American moment’ speech/);
  const images = got.images as string[];
  assert.equal(images.length, 2);
  assert.ok(images.every((u) => u.startsWith('https://i.guim.co.uk/img/media/b73c8752cd4667c923dff7f1542f1fb20089e421/')));
});

test('Atom maps id, link rel=alternate, published, summary and content (heise.atom)', async () => {
  const got = await item('http://heise.de/-3088438');
  assert.equal(got.title, 'Java-Anwendungsserver: Red Hat gibt WildFly 10 frei');
  assert.equal(got.uri, 'http://www.heise.de/developer/meldung/Java-Anwendungsserver-Red-Hat-gibt-WildFly-10-frei-3088438.html?wt_mc=rss.developer.beitrag.atom');
  assert.equal(got.publication_datetime, '2016-02-01T17:22:00+01:00');
  assert.match(got.description as string, /^Die nun verfügbare Version 10 des Enterprise-Java-Servers/);
  assert.match(got.content_body as string, /<img src="http:\/\/www\.heise\.de\/scale\/geometry/);
});

test('Atom author names, category terms and media:group thumbnails map (feedburner.atom, atom-customfields.atom)', async () => {
  const post = await item('tag:blogger.com,1999:blog-7815614485808579332.post-8394866751819460570');
  assert.equal(post.title, 'AdWords and DFP Java client library will soon require Java 7+');
  assert.deepEqual(post.item_attributes, { author: 'Google Ads Developer Advisor' });
  assert.deepEqual(post.categories, [['adwords_api'], ['client_libraries'], ['dfp_api']]);
  assert.equal(post.publication_datetime, '2016-06-03T07:38:00.000-07:00');
  const video = await item('yt:video:lR-w1h5ONOY');
  assert.equal(video.uri, 'https://www.youtube.com/watch?v=lR-w1h5ONOY');
  assert.deepEqual(video.item_attributes, { author: 'L2inc' });
  assert.deepEqual(video.images, ['https://i1.ytimg.com/vi/lR-w1h5ONOY/hqdefault.jpg']);
});

test('RSS 1.0 (RDF) entries map with dc:date and the channel language (craigslist.rss)', async () => {
  const got = await item('http://sfbay.craigslist.org/eby/apa/6186664607.html');
  assert.equal(got.publication_datetime, '2017-06-21T10:33:10-07:00');
  assert.equal(got.language, 'en-us');
  assert.equal(got.uri, 'http://sfbay.craigslist.org/eby/apa/6186664607.html');
});

test('a windows-1252 feed is decoded (encoding.rss)', async () => {
  const got = await item('http://feeds.jn.pt/~r/JN-ULTIMAS/~3/UBnb8Ra3Q1U/sonia-laig-e-a-nova-presidente-da-rarissimas-9021600.html');
  assert.equal(got.title, 'Mãe de utente é a nova presidente da Raríssimas');
  assert.deepEqual(got.categories, [['Nacional']]);
  assert.equal(got.language, 'pt-pt');
});

test('the largest feed applies whole (giantbomb-podcast.rss, 730 entries)', async () => {
  const status = statuses.get('rss-parser/test/input/giantbomb-podcast.rss')!;
  assert.equal(status.entries_seen, 730);
  assert.equal(status.entries_applied + status.entries_unchanged, 730);
  const got = await item('1600-2823');
  assert.equal(got.title, 'Giant Bombcast 603: Call of Tuesday');
  assert.equal(got.publication_datetime, '2019-10-01T22:30:00.000Z');
});

test('entries without guid or link are rejected with their reason; unreadable dates are a warning', () => {
  const status = statuses.get('feedparser/tests/wellformed/rss/item_dc_creator.xml')!;
  assert.equal(status.entries_rejected, 1);
  assert.deepEqual(status.rejected_entries, [{ entry: 1, item_id: null, reason: 'has no guid or link to identify it' }]);
  const uol = statuses.get('rss-parser/test/input/uolNoticias.rss')!;
  assert.equal(uol.entries_applied, 15);
  assert.match(uol.warnings.join(' '), /15 entries have an unreadable date \(e\.g\. 'Seg, 24 Set 2018/);
  assert.match(uol.warnings.join(' '), /not valid utf-8 replaced by U\+FFFD/);
});
