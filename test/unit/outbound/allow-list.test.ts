// Which addresses the outbound guard treats as public, and what an operator's allowance lets through.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allowEntryProblem, isPublicAddress, mayConnect, parseAllowList } from '../../../src/outbound/allow-list.ts';
import { literalRefusal } from '../../../src/outbound/guard.ts';

test('internal addresses of every kind, and IPv4-mapped forms of them, are not public', () => {
  for (const ip of [
    '127.0.0.1', '127.255.0.9', '::1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.0.1', '169.254.169.254',
    'fe80::1', 'fc00::1', 'fd12:3456::1', '100.64.0.1', '100.127.255.254', '224.0.0.1', 'ff02::1', '0.0.0.0', '::',
    '255.255.255.255', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '64:ff9b::7f00:1', '2002:7f00:1::1',
  ]) {
    assert.equal(isPublicAddress(ip), false, ip);
  }
  for (const ip of ['93.184.215.14', '8.8.8.8', '2606:4700::6810:84e5', '::ffff:8.8.8.8', '172.32.0.1', '100.128.0.1']) {
    assert.equal(isPublicAddress(ip), true, ip);
  }
});

test('an allowance names hosts, addresses or CIDR ranges, in either IP family', () => {
  const allow = parseAllowList(['feeds.internal', '10.20.0.0/16', '::ffff:192.168.7.0/120', 'fd00::/8', '127.0.0.1']);
  assert.ok(mayConnect('10.20.3.4', 'x.example', allow));
  assert.ok(!mayConnect('10.21.3.4', 'x.example', allow));
  assert.ok(mayConnect('::ffff:10.20.0.1', 'x.example', allow), 'mapped form of an allowed address');
  assert.ok(mayConnect('192.168.7.9', 'x.example', allow), 'a range given in mapped form');
  assert.ok(mayConnect('fd00::5', 'x.example', allow));
  assert.ok(mayConnect('192.168.1.1', 'FEEDS.internal.', allow), 'by host name, case and trailing dot ignored');
  assert.ok(!mayConnect('192.168.1.1', 'other.internal', allow));
  assert.ok(mayConnect('127.0.0.1', 'x', allow));
  assert.ok(!mayConnect('127.0.0.2', 'x', allow));
});

test('allow entries that are neither host, address nor range are reported', () => {
  assert.equal(allowEntryProblem('10.0.0.0/8'), undefined);
  assert.equal(allowEntryProblem('feeds.example.com'), undefined);
  assert.equal(allowEntryProblem('::1'), undefined);
  assert.match(allowEntryProblem('10.0.0.0/33') ?? '', /CIDR/);
  assert.match(allowEntryProblem('http://x/') ?? '', /not a valid CIDR/);
  assert.match(allowEntryProblem('a b') ?? '', /neither/);
});

test('literal hosts are judged after WHATWG URL normalisation, without DNS', () => {
  const none = parseAllowList([]);
  for (const url of ['http://2130706433/', 'http://0x7f.1/', 'http://[::ffff:7f00:1]/', 'http://localhost:8080/', 'http://a.b.localhost/']) {
    assert.match(literalRefusal(url, none) ?? '', /internal/, url);
  }
  assert.equal(literalRefusal('https://example.com/feed', none), undefined);
  assert.equal(literalRefusal('http://93.184.215.14/', none), undefined);
  assert.match(literalRefusal('ftp://example.com/', none) ?? '', /http or https/);
  assert.equal(literalRefusal('http://localhost/', parseAllowList(['localhost'])), undefined);
  assert.equal(literalRefusal('http://127.0.0.1/', parseAllowList(['127.0.0.0/8'])), undefined);
});
