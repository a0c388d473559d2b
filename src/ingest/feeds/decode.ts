/**
 * @module ingest/feeds/decode
 * Bytes of a feed body → text. The encoding is, in order: a byte order mark (UTF-8, UTF-16 and
 * UTF-32, either byte order); the `charset` of the Content-Type (RFC 7303 §3: it overrides the
 * XML declaration); for XML, the byte pattern of `<?xml` (UTF-16/32 without a mark) and the
 * declaration's `encoding`; else UTF-8. Every WHATWG encoding is supported (TextDecoder with
 * Node's full ICU: big5, euc-kr, gb18030, windows-125x, ...), plus UTF-32, which WHATWG lacks.
 * An unknown label falls back to UTF-8 and invalid bytes become U+FFFD, each with a warning for
 * the feed status: one bad byte must not stop a whole catalog feed.
 */

export interface DecodedBody {
  text: string;
  /** The encoding the body was read as (WHATWG name, or utf-32le/be). */
  encoding: string;
  warnings: string[];
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  if (bytes.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}

/** The encoding a byte order mark names, and the mark's length. */
function fromBom(bytes: Uint8Array): { label: string; skip: number } | undefined {
  if (startsWith(bytes, [0xef, 0xbb, 0xbf])) return { label: 'utf-8', skip: 3 };
  if (startsWith(bytes, [0x00, 0x00, 0xfe, 0xff])) return { label: 'utf-32be', skip: 4 };
  if (startsWith(bytes, [0xff, 0xfe, 0x00, 0x00])) return { label: 'utf-32le', skip: 4 };
  if (startsWith(bytes, [0xfe, 0xff])) return { label: 'utf-16be', skip: 2 };
  if (startsWith(bytes, [0xff, 0xfe])) return { label: 'utf-16le', skip: 2 };
  return undefined;
}

/** XML 1.0 Appendix F: the first bytes of `<?xml` (or `<`) in an encoding without a mark. */
function fromXmlBytePattern(bytes: Uint8Array): string | undefined {
  if (startsWith(bytes, [0x00, 0x00, 0x00, 0x3c])) return 'utf-32be';
  if (startsWith(bytes, [0x3c, 0x00, 0x00, 0x00])) return 'utf-32le';
  if (startsWith(bytes, [0x00, 0x3c, 0x00, 0x3f]) || startsWith(bytes, [0x00, 0x3c, 0x00])) return 'utf-16be';
  if (startsWith(bytes, [0x3c, 0x00, 0x3f, 0x00]) || startsWith(bytes, [0x3c, 0x00])) return 'utf-16le';
  return undefined;
}

/** The `charset` parameter of a Content-Type, unquoted and lower-cased. */
export function charsetOf(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*("([^"]*)"|'([^']*)'|[^;\s]+)/i.exec(contentType ?? '');
  if (!match) return undefined;
  const value = (match[2] ?? match[3] ?? match[1] ?? '').trim().toLowerCase();
  return value === '' ? undefined : value;
}

/** The `encoding` of the XML declaration, read from the first bytes as ASCII. */
function fromXmlDeclaration(head: string): string | undefined {
  const decl = /^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(head);
  return decl?.[1]?.toLowerCase();
}

function decodeUtf32(bytes: Uint8Array, littleEndian: boolean, warnings: string[]): string {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const parts: string[] = [];
  let invalid = 0;
  const codes: number[] = [];
  const usable = bytes.byteLength - (bytes.byteLength % 4);
  for (let i = 0; i < usable; i += 4) {
    let code = view.getUint32(i, littleEndian);
    if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
      code = 0xfffd;
      invalid++;
    }
    codes.push(code);
    if (codes.length === 8192) parts.push(String.fromCodePoint(...codes.splice(0)));
  }
  parts.push(String.fromCodePoint(...codes));
  if (usable !== bytes.byteLength) invalid++;
  if (invalid > 0) warnings.push(`${invalid} invalid UTF-32 code unit(s) replaced by U+FFFD`);
  return parts.join('');
}

/** Normalises an encoding label; undefined when TextDecoder (and this module) cannot read it. */
function supported(label: string): string | undefined {
  if (label === 'utf-32' || label === 'utf-32be' || label === 'ucs-4') return 'utf-32be';
  if (label === 'utf-32le') return 'utf-32le';
  try {
    return new TextDecoder(label).encoding;
  } catch {
    return undefined;
  }
}

function decodeAs(bytes: Uint8Array, encoding: string, warnings: string[]): string {
  if (encoding === 'utf-32be' || encoding === 'utf-32le') return decodeUtf32(bytes, encoding === 'utf-32le', warnings);
  try {
    return new TextDecoder(encoding, { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    const text = new TextDecoder(encoding, { ignoreBOM: true }).decode(bytes);
    let replaced = 0;
    for (let i = text.indexOf('\ufffd'); i !== -1; i = text.indexOf('\ufffd', i + 1)) replaced++;
    warnings.push(`${replaced} byte sequence(s) not valid ${encoding} replaced by U+FFFD`);
    return text;
  }
}

/** Decodes a feed body; `xml` enables XML's own encoding detection. Never throws. */
export function decodeBody(bytes: Uint8Array, contentType: string | undefined, xml: boolean): DecodedBody {
  const warnings: string[] = [];
  const bom = fromBom(bytes);
  const body = bom ? bytes.subarray(bom.skip) : bytes;
  let label = bom?.label ?? charsetOf(contentType);
  let from = bom ? 'byte order mark' : 'Content-Type charset';
  if (label === undefined && xml) {
    const pattern = fromXmlBytePattern(body);
    // UTF-16 and UTF-32 declarations can only be read once decoded; their byte pattern decides.
    label = pattern ?? fromXmlDeclaration(Buffer.from(body.subarray(0, 256)).toString('latin1'));
    from = 'XML declaration';
  }
  let encoding = label === undefined ? 'utf-8' : supported(label);
  if (encoding === undefined) {
    warnings.push(`unknown encoding '${label}' (${from}): read as UTF-8`);
    encoding = 'utf-8';
  }
  // A mark of another encoding after a charset (a misconfigured server) is dropped.
  let text = decodeAs(body, encoding, warnings);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return { text, encoding, warnings };
}
