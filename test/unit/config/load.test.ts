import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../../src/config/load.ts';
import { configFile, configProblems as problemsOf } from '../../helpers/config.ts';

test('with no file the embedded default serves the demo environment on port 8080 from ./data', () => {
  const config = loadConfig({});
  assert.equal(config.server.port, 8080);
  assert.equal(config.store.dataDir, './data');
  assert.deepEqual(config.environments.demo?.itemTypes, ['article', 'video', 'product']);
  assert.deepEqual(Object.keys(config.environments.demo?.lists ?? {}), [
    'recommended_for_you',
    'more_like_this',
    'trending',
    'popular',
    'latest',
  ]);
  assert.equal(config.environments.demo?.listCache.ttlSec, 1800);
  assert.ok(Object.isFrozen(config.environments.demo?.itemTypes), 'the config is deep-frozen');
});

test('environment variables override the file, which overrides the defaults', () => {
  const file = configFile('c.yaml', 'server:\n  port: 9000\n  maxBodyBytes: 4096\n');
  assert.equal(loadConfig({ AFFINITY_CONFIG: file }).server.port, 9000);
  assert.equal(loadConfig({ AFFINITY_CONFIG: file, PORT: '9100' }).server.port, 9100);
  assert.equal(loadConfig({ AFFINITY_CONFIG: file, PORT: '9100', AFFINITY_PORT: '9200' }).server.port, 9200);
  assert.equal(loadConfig({ AFFINITY_CONFIG: file }).server.maxBodyBytes, 4096);
  assert.equal(loadConfig({ AFFINITY_DATA_DIR: '/tmp/x' }).store.dataDir, '/tmp/x');
});

test('a file environment replaces demo and inherits the per-environment defaults', () => {
  const file = configFile('c.json', JSON.stringify({ environments: { shop: { itemTypes: ['product'] } } }));
  const config = loadConfig({ AFFINITY_CONFIG: file });
  assert.deepEqual(Object.keys(config.environments), ['shop']);
  assert.equal(config.environments.shop?.serviceGroup, 'affinity');
  assert.equal(config.environments.shop?.listCache.enabled, true);
});

test('invalid values are reported by key', () => {
  assert.deepEqual(problemsOf({ AFFINITY_PORT: 'abc' }), ["AFFINITY_PORT must be an integer, got 'abc'"]);
  assert.deepEqual(problemsOf({ AFFINITY_DEMO_CLIENT: 'maybe' }), [
    "AFFINITY_DEMO_CLIENT must be a boolean (true/false), got 'maybe'",
  ]);
  assert.deepEqual(problemsOf({ AFFINITY_PORT: '70000' }), ['server.port must be <= 65535']);
  const typo = configFile('c.yaml', 'server:\n  prot: 1\n');
  assert.deepEqual(problemsOf({ AFFINITY_CONFIG: typo }), ["server must NOT have additional properties 'prot'"]);
  const empty = configFile('c.json', JSON.stringify({ environments: { shop: { itemTypes: [] } } }));
  assert.deepEqual(problemsOf({ AFFINITY_CONFIG: empty }), ['environments.shop.itemTypes must NOT have fewer than 1 items']);
  const badList = configFile(
    'c.json',
    JSON.stringify({
      environments: { shop: { itemTypes: ['product'], lists: { l: { strategy: 'popular', itemTypes: ['video'] } } } },
    }),
  );
  assert.deepEqual(problemsOf({ AFFINITY_CONFIG: badList }), [
    "environments.shop.lists.l.itemTypes: 'video' is not an item type of 'shop'",
  ]);
  const shares = configFile(
    'c.json',
    JSON.stringify({ environments: { shop: { itemTypes: ['product'], controlGroups: { a: 0.7, b: 0.5 } } } }),
  );
  assert.deepEqual(problemsOf({ AFFINITY_CONFIG: shares }), ['environments.shop.controlGroups: shares add up to 1.2, more than 1']);
});

test('the trained model\'s quality options refuse values out of range, by key', () => {
  const trained = (values: Record<string, unknown>) =>
    configFile('c.json', JSON.stringify({ environments: { shop: { itemTypes: ['product'], model: { trained: values } } } }));
  assert.deepEqual(problemsOf({ AFFINITY_CONFIG: trained({ ownWeightPower: -0.5 }) }), ['environments.shop.model.trained.ownWeightPower must be >= 0']);
  assert.deepEqual(problemsOf({ AFFINITY_CONFIG: trained({ ownWeightPower: 'half' }) }), ['environments.shop.model.trained.ownWeightPower must be number']);
  assert.deepEqual(problemsOf({ AFFINITY_CONFIG: trained({ shortHistoryItems: 20_000 }) }), ['environments.shop.model.trained.shortHistoryItems must be <= 10000']);
  const kept = loadConfig({ AFFINITY_CONFIG: trained({ ownWeightPower: 1, shortHistoryItems: 0 }) }).environments.shop!.model.trained;
  assert.deepEqual([kept.ownWeightPower, kept.shortHistoryItems], [1, 0]);
});

test('an unreadable or unparsable file is reported with its path', () => {
  const [missing] = problemsOf({ AFFINITY_CONFIG: '/nonexistent/affinity.yaml' });
  assert.match(missing!, /^AFFINITY_CONFIG: cannot read '\/nonexistent\/affinity.yaml'/);
  const broken = configFile('c.json', '{ not json');
  const [parse] = problemsOf({ AFFINITY_CONFIG: broken });
  assert.match(parse!, /is not valid JSON or YAML/);
});

test('outbound allowances: bad entries, and internal feed or JWKS URLs without an allowance, stop the start naming the key', () => {
  const file = configFile(
    'outbound.json',
    JSON.stringify({
      auth: { external: { issuer: 'https://idp', audience: 'a', jwksUrl: 'http://169.254.169.254/jwks', environmentsClaim: 'envs', outbound: { allow: ['10.0.0.0/33'] } } },
      environments: {
        shop: {
          itemTypes: ['product'],
          outbound: { allow: ['not a host', 'feeds.corp.example'] },
          feeds: { local: { url: 'http://127.0.0.1:8080/feed.rss', format: 'rss', itemType: 'product' } },
        },
      },
    }),
  );
  const problems = problemsOf({ AFFINITY_CONFIG: file });
  assert.ok(problems.some((p) => /^environments\.shop\.outbound\.allow\.0 'not a host'/.test(p)), problems.join('\n'));
  assert.ok(problems.some((p) => /^environments\.shop\.feeds\.local\.url points at an internal address.*outbound\.allow/.test(p)), problems.join('\n'));
  assert.ok(problems.some((p) => /^auth\.external\.outbound\.allow\.0 '10\.0\.0\.0\/33' is not a valid CIDR/.test(p)), problems.join('\n'));
  assert.ok(problems.some((p) => /^auth\.external\.jwksUrl points at an internal address/.test(p)), problems.join('\n'));
  assert.equal(problems.length, 4, problems.join('\n'));
});

test('an allowance lets an internal feed and JWKS URL through, and environments default to none', () => {
  const file = configFile(
    'allowed.json',
    JSON.stringify({
      auth: { external: { issuer: 'https://idp', audience: 'a', jwksUrl: 'http://10.1.2.3/jwks', environmentsClaim: 'envs', outbound: { allow: ['10.0.0.0/8'] } } },
      environments: { shop: { itemTypes: ['product'], outbound: { allow: ['127.0.0.1'] }, feeds: { local: { url: 'http://127.0.0.1:8080/feed.rss', format: 'rss', itemType: 'product' } } } },
    }),
  );
  assert.deepEqual(loadConfig({ AFFINITY_CONFIG: file }).environments.shop?.outbound.allow, ['127.0.0.1']);
  assert.deepEqual(loadConfig({}).environments.demo?.outbound.allow, []);
});
