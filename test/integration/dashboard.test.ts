// The /dashboard page in Chromium against a real server filled with generated traffic of a
// known lift (helpers/report-traffic.ts): a wrong secret is refused on the page and stores
// nothing; signed in, the figures on the page are the reporting API's, formatted as the page
// formats them, and the control group's lift is shown with its interval. Screenshots are saved.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { count, interval, lift, money, percent } from '../../web/dashboard/format.ts';
import { waitFor } from '../helpers/api.ts';
import { getToken } from '../helpers/auth.ts';
import { chromiumMissing, collectPageErrors, launchChromium, screenshot } from '../helpers/browser.ts';
import { EXPECTED, SHOP_CONFIG, sendShopTraffic } from '../helpers/report-traffic.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { snapshotStore, assertSameStore } from '../helpers/store-snapshot.ts';

describe('dashboard in Chromium', { skip: chromiumMissing, concurrency: 1 }, () => {
  let server: TestServer;
  let token: string;
  let browser: Browser;
  let page: Page;
  let pageErrors: string[];
  const today = new Date().toISOString().slice(0, 10);

  before(async () => {
    [server, browser] = await Promise.all([startServer({ config: SHOP_CONFIG }), launchChromium()]);
    token = await getToken(server);
    await sendShopTraffic(server, token);
    // One finished import (it updates a product the traffic already has), for the imports table.
    const upload = await fetch(`${server.url}/api/shop/imports`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'text/csv' },
      body: 'operation,item_id,item_type,title\nUPDATE,p1,product,Product p1\n',
    });
    assert.equal(upload.status, 202);
    const { import_id: importId } = (await upload.json()) as { import_id: string };
    await waitFor('the import to finish', async () => ((await api(`/api/shop/imports/${importId}`)).state === 'done' ? true : undefined));
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    pageErrors = collectPageErrors(page);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const api = async (path: string) => {
    const res = await fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    return (await res.json()) as Record<string, any>;
  };
  const text = (testId: string) => page.getByTestId(testId).first().textContent();

  test('the page is served at /dashboard only, its assets beside it; other names answer 404', async () => {
    const page = await fetch(`${server.url}/dashboard`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal((await fetch(`${server.url}/dashboard/app.js`)).status, 200);
    for (const name of ['index.html', 'nope.js']) assert.equal((await fetch(`${server.url}/dashboard/${name}`)).status, 404, name);
  });

  test('a wrong client secret is refused on the page, keeps no token and stores nothing', async () => {
    const stored = await snapshotStore(server.dataDir);
    await page.goto(`${server.url}/dashboard?from=${today}&to=${today}`);
    await page.fill('input[name=client_id]', server.demoClient!.clientId);
    await page.fill('input[name=client_secret]', 'not-the-secret');
    await page.click('#login button[type=submit]');
    await page.getByTestId('login-error').filter({ hasText: 'Sign-in failed' }).waitFor();
    assert.match((await text('login-error')) ?? '', /Sign-in failed: .+/);
    assert.equal(await page.evaluate("sessionStorage.getItem('affinity.dashboard')"), null);
    assert.equal(await page.locator('#dashboard').isHidden(), true);
    await screenshot(page, 'dashboard-login-refused');
    assertSameStore(await snapshotStore(server.dataDir), stored);
  });

  test('signed in, the page shows the reporting API figures and the control group lift with its interval', async () => {
    await page.fill('input[name=client_secret]', server.demoClient!.clientSecret);
    await page.click('#login button[type=submit]');
    await page.waitForSelector(`body[data-loaded="shop ${today} ${today}"]`);
    const session = JSON.parse((await page.evaluate("sessionStorage.getItem('affinity.dashboard')")) as string) as { token: string } | null;
    assert.ok(session?.token, 'the token is kept in sessionStorage');

    const range = `from=${today}&to=${today}`;
    const report = await api(`/api/shop/reports?${range}&breakdown=list_name`);
    const list = report.totals.find((t: { value: string }) => t.value === 'top_sellers').metrics;
    assert.equal(await text('impressions-top_sellers'), count(list.impressions));
    assert.equal(await text('clicks-top_sellers'), count(list.clicks));
    assert.equal(await text('ctr-top_sellers'), percent(list.ctr));
    assert.equal(await text('revenue-top_sellers'), money(list.revenue));
    assert.equal(list.impressions, EXPECTED.list.impressions);
    assert.equal(await text('intake-impression'), count(report.intake.impression));
    assert.equal(await text('catalog-items'), count(report.coverage.catalog_items));
    assert.equal(await text('requests'), count(report.latency_ms.requests));

    const ab = await api(`/api/shop/reports/ab?${range}`);
    const customer = ab.comparisons.find((c: { control_group: string }) => c.control_group === 'customer');
    for (const metric of ['ctr', 'conversion_rate', 'revenue_per_user']) {
      const m = customer.metrics.find((x: { metric: string }) => x.metric === metric);
      assert.equal(await text(`ab-lift-customer-${metric}`), lift(m.lift));
      assert.equal(await text(`ab-ci-customer-${metric}`), interval(m.ci95));
    }
    // The known lift, shown with an interval that holds it.
    assert.equal(await text('ab-lift-customer-ctr'), '+100.00%');
    assert.match((await text('ab-ci-customer-ctr')) ?? '', /^\[\+\d+\.\d\d%, \+\d+\.\d\d%\]$/);
    assert.match((await text('ab-service-customer-ctr')) ?? '', /30\.00% \(n=200\)/);

    const imports = await api('/api/shop/imports?limit=5');
    assert.deepEqual(await page.locator('[data-testid=imports] tr').nth(1).locator('td').allTextContents(), [String(imports.imports[0].file ?? imports.imports[0].import_id), 'done', '1', '0']);

    const items = await api(`/api/shop/reports/items?${range}&limit=10`);
    const firstClicked = await page.locator('[data-testid=top-clicked] li').first().textContent();
    assert.equal(firstClicked, `${items.clicked[0].item_id} (product) — ${count(items.clicked[0].count)}`);
    assert.equal(await page.locator('#chart-ctr canvas').count(), 1, 'the CTR chart is drawn');
    await screenshot(page, 'dashboard');
    assert.deepEqual(pageErrors, []);
  });
});
