import assert from 'node:assert/strict';
import { test } from 'node:test';
import { charsetOf, decodeBody } from '../../../../src/ingest/feeds/decode.ts';

const utf16le = (text: string) => Buffer.from(text, 'utf16le');
function utf32(text: string, littleEndian: boolean): Buffer {
  const codes = [...text].map((c) => c.codePointAt(0)!);
  const out = Buffer.alloc(codes.length * 4);
  codes.forEach((c, i) => (littleEndian ? out.writeUInt32LE(c, i * 4) : out.writeUInt32BE(c, i * 4)));
  return out;
}

test('a byte order mark decides the encoding and is removed', () => {
  assert.deepEqual(decodeBody(Buffer.from('\ufeff<rss/>'), undefined, true), { text: '<rss/>', encoding: 'utf-8', warnings: [] });
  assert.equal(decodeBody(Buffer.concat([Buffer.from([0xff, 0xfe]), utf16le('<rss>é</rss>')]), 'text/xml; charset=utf-8', true).text, '<rss>é</rss>');
  const be32 = decodeBody(Buffer.concat([Buffer.from([0, 0, 0xfe, 0xff]), utf32('<rss>😀</rss>', false)]), undefined, true);
  assert.deepEqual([be32.text, be32.encoding], ['<rss>😀</rss>', 'utf-32be']);
});

test('UTF-16 and UTF-32 without a mark are recognised by the bytes of "<?xml"', () => {
  assert.equal(decodeBody(utf16le('<?xml version="1.0" encoding="utf-16"?><rss/>'), undefined, true).encoding, 'utf-16le');
  assert.equal(decodeBody(utf32('<?xml version="1.0"?><rss/>', true), undefined, true).encoding, 'utf-32le');
});

test('the Content-Type charset overrides the XML declaration, which is used without one', () => {
  const latin1 = Buffer.concat([Buffer.from('<?xml version="1.0" encoding="iso-8859-1"?><t>'), Buffer.from([0xe9]), Buffer.from('</t>')]);
  assert.equal(decodeBody(latin1, 'application/xml', true).text.slice(-5), 'é</t>');
  assert.equal(decodeBody(latin1, 'application/xml; charset="utf-8"', true).warnings[0], '1 byte sequence(s) not valid utf-8 replaced by U+FFFD');
  assert.equal(charsetOf("text/xml;charset= 'US-ASCII'"), 'us-ascii');
  assert.equal(charsetOf('text/xml;'), undefined);
});

test('an unknown encoding is read as UTF-8 with a warning; JSON and CSV ignore XML declarations', () => {
  const bogus = decodeBody(Buffer.from('<?xml version="1.0" encoding="bogus"?><rss/>'), undefined, true);
  assert.equal(bogus.encoding, 'utf-8');
  assert.match(bogus.warnings[0]!, /unknown encoding 'bogus'/);
  assert.equal(decodeBody(Buffer.from('[{"a":"é"}]'), undefined, false).text, '[{"a":"é"}]');
});
