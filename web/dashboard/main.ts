/**
 * @module web/dashboard/main
 * The reporting dashboard served at /dashboard: signs in with a client id and secret (the
 * OAuth client-credentials grant; the token is kept in sessionStorage, so it ends with the tab),
 * then shows for an environment and a date range what the reporting API says: CTR and
 * conversion per list over time, the A/B comparison, top items, event intake, the model
 * builder's lag and model versions (/health), catalog size, coverage, latency, and recent feed
 * and import outcomes. Text only goes through textContent: no API value is parsed as HTML.
 */
import { drawLines } from './charts.ts';
import './style.css';
import { count, interval, lift, money, ms, pValue, percent } from './format.ts';

const SESSION_KEY = 'affinity.dashboard';
const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

interface Session {
  token: string;
  expiresAt: number;
  environments: string[];
  clientId: string;
}

// `any`: API bodies, whose shapes the OpenAPI document gives; the page only reads fields out of them.
type Json = Record<string, any>;

function readSession(): Session | undefined {
  try {
    const s = JSON.parse(sessionStorage.getItem(SESSION_KEY) ?? 'null') as Session | null;
    return s && s.expiresAt > Date.now() ? s : undefined;
  } catch {
    return undefined;
  }
}

async function signIn(clientId: string, clientSecret: string): Promise<Session> {
  const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret });
  // credentials 'omit': the 401 of a wrong secret carries a Basic challenge, which would
  // otherwise open the browser's own sign-in prompt.
  const res = await fetch('/api/oauth/token', { method: 'POST', body, credentials: 'omit' });
  const json = (await res.json().catch(() => ({}))) as Json;
  if (res.status !== 200) throw new Error(json.error_description ?? json.detail ?? `sign-in failed (${res.status})`);
  const session: Session = {
    token: json.access_token,
    expiresAt: Date.now() + json.expires_in * 1000,
    environments: String(json.scope ?? '').split(' ').filter(Boolean),
    clientId,
  };
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
  return session;
}

async function api(session: Session, path: string): Promise<Json> {
  const res = await fetch(path, { headers: { Authorization: `Bearer ${session.token}` } });
  if (res.status === 401) {
    sessionStorage.removeItem(SESSION_KEY);
    showLogin('Your session has ended: sign in again.');
    throw new Error('signed out');
  }
  const json = (await res.json()) as Json;
  if (!res.ok) throw new Error(json.detail ?? `${path} answered ${res.status}`);
  return json;
}

function cell(tag: 'td' | 'th', text: string, testId?: string): HTMLElement {
  const el = document.createElement(tag);
  el.textContent = text;
  if (testId) el.dataset.testid = testId;
  return el;
}

/** Fills a table: a header row, then rows of [text, testId?] cells. */
function fillTable(id: string, head: string[], rows: Array<Array<string | [string, string]>>): void {
  const table = $(id);
  table.replaceChildren();
  const tr = document.createElement('tr');
  for (const h of head) tr.append(cell('th', h));
  table.append(tr);
  for (const r of rows) {
    const row = document.createElement('tr');
    for (const c of r) row.append(typeof c === 'string' ? cell('td', c) : cell('td', c[0], c[1]));
    table.append(row);
  }
}

function fillList(id: string, items: Json[]): void {
  $(id).replaceChildren(
    ...items.map((it) => {
      const li = document.createElement('li');
      li.textContent = `${it.item_id} (${it.item_type}) — ${count(it.count)}`;
      return li;
    }),
  );
}

function card(label: string, value: string, testId: string): HTMLElement {
  const div = document.createElement('div');
  div.className = 'card';
  const strong = document.createElement('b');
  strong.textContent = value;
  strong.dataset.testid = testId;
  div.append(strong, label);
  return div;
}

function daysOf(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(from); t <= Date.parse(to); t += 86_400_000) out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

function render(env: string, report: Json, ab: Json, items: Json, health: Json, feeds: Json, imports: Json): void {
  const lists = (report.totals as Json[]).filter((t) => t.dimension === 'list_name');
  fillTable(
    'lists',
    ['List', 'Requests', 'Impressions', 'Clicks', 'CTR', 'Add to cart', 'Purchases', 'Revenue'],
    lists.map((t) => [
      t.value,
      count(t.metrics.requests),
      [count(t.metrics.impressions), `impressions-${t.value}`],
      [count(t.metrics.clicks), `clicks-${t.value}`],
      [percent(t.metrics.ctr), `ctr-${t.value}`],
      count(t.metrics.add_to_cart),
      count(t.metrics.purchase),
      [money(t.metrics.revenue), `revenue-${t.value}`],
    ]),
  );

  const days = daysOf(report.from, report.to);
  const ctr = new Map<string, Array<number | null>>();
  const conversion = new Map<string, Array<number | null>>();
  for (const t of lists) {
    ctr.set(t.value, days.map(() => null));
    conversion.set(t.value, days.map(() => null));
  }
  for (const r of report.rows as Json[]) {
    if (r.dimension !== 'list_name' || !ctr.has(r.value)) continue;
    const i = days.indexOf(r.day);
    const m = r.metrics as Record<string, number>;
    if (i < 0) continue;
    if (m.impressions) ctr.get(r.value)![i] = (m.clicks ?? 0) / m.impressions;
    if (m.clicks) conversion.get(r.value)![i] = (m.purchase ?? 0) / m.clicks;
  }
  const xs = days.map((d) => Date.parse(d) / 1000);
  drawLines('chart-ctr', xs, ctr);
  drawLines('chart-conversion', xs, conversion);

  $('ab-note').textContent = `Service group '${ab.service_group}' against each control group; unit: ${ab.unit}; 95% intervals (rates: two-proportion, log risk ratio; revenue per user: delta method).`;
  const abRows: Array<Array<string | [string, string]>> = [];
  for (const c of ab.comparisons as Json[]) {
    for (const m of c.metrics as Json[]) {
      const fmt = m.metric === 'revenue_per_user' ? money : percent;
      const id = `${c.control_group}-${m.metric}`;
      abRows.push([
        c.control_group,
        m.metric,
        [`${fmt(m.service.value)} (n=${count(m.service.n)})`, `ab-service-${id}`],
        [`${fmt(m.control.value)} (n=${count(m.control.n)})`, `ab-control-${id}`],
        [lift(m.lift), `ab-lift-${id}`],
        [interval(m.ci95), `ab-ci-${id}`],
        [pValue(m.p_value), `ab-p-${id}`],
      ]);
    }
  }
  fillTable('ab', ['Control group', 'Metric', 'Service', 'Control', 'Lift', '95% interval', 'p'], abRows);

  fillList('top-recommended', items.recommended);
  fillList('top-clicked', items.clicked);
  fillTable('intake', ['Event type', 'Events'], Object.entries(report.intake as Record<string, number>).sort((a, b) => b[1] - a[1]).map(([type, n]) => [type, [count(n), `intake-${type}`]]));

  const builder = health.model_builder as Json | null;
  const trained = (health.trained_model as Json | null)?.[env] as Json | undefined;
  fillTable('model', ['', ''], [
    ['Builder lag p50 / p99', [builder ? `${ms(builder.lag_ms.p50)} / ${ms(builder.lag_ms.p99)}` : '–', 'builder-lag']],
    ['Events applied', count(builder?.positions?.[env])],
    ['Trained model version', [String(trained?.last_build?.version ?? '–'), 'model-version']],
    ['Built at', String(trained?.last_build?.built_at ?? '–')],
  ]);

  $('cards').replaceChildren(
    card('catalog items', count(report.coverage.catalog_items), 'catalog-items'),
    card('coverage', percent(report.coverage.share, 1), 'coverage'),
    card('requests', count(report.latency_ms.requests), 'requests'),
    card('latency p50', ms(report.latency_ms.p50), 'latency-p50'),
    card('latency p99', ms(report.latency_ms.p99), 'latency-p99'),
  );
  fillTable('feeds', ['Feed', 'State', 'Last poll', 'Rejected'], (feeds.feeds as Json[]).map((f) => [f.feed_id, f.status?.state ?? 'never_polled', String(f.status?.last_poll_at ?? '–'), count(f.status?.entries_rejected ?? 0)]));
  fillTable('imports', ['Import', 'State', 'Rows', 'Rejected'], (imports.imports as Json[]).map((i) => [String(i.file ?? i.import_id), i.state, count(i.rows), count(i.rejected)]));
}

async function load(session: Session): Promise<void> {
  const form = $<HTMLFormElement>('range');
  const env = (form.elements.namedItem('environment') as HTMLSelectElement).value;
  const from = (form.elements.namedItem('from') as HTMLInputElement).value;
  const to = (form.elements.namedItem('to') as HTMLInputElement).value;
  const status = $('status');
  status.textContent = 'Loading…';
  const range = `from=${from}&to=${to}`;
  const base = `/api/${encodeURIComponent(env)}`;
  try {
    const [report, ab, items, health, feeds, imports] = await Promise.all([
      api(session, `${base}/reports?${range}&breakdown=list_name`),
      api(session, `${base}/reports/ab?${range}`),
      api(session, `${base}/reports/items?${range}&limit=10`),
      fetch('/health').then((r) => r.json() as Promise<Json>),
      api(session, `${base}/feeds`),
      api(session, `${base}/imports?limit=5`),
    ]);
    render(env, report, ab, items, health, feeds, imports);
    status.textContent = `Updated ${new Date().toLocaleTimeString()}`;
    document.body.dataset.loaded = `${env} ${from} ${to}`;
  } catch (err) {
    status.textContent = (err as Error).message;
  }
}

function showLogin(message = ''): void {
  $('login').hidden = false;
  $('dashboard').hidden = true;
  $('sign-out').hidden = true;
  $('who').textContent = '';
  $('login-error').textContent = message;
}

function showDashboard(session: Session): void {
  $('login').hidden = true;
  $('dashboard').hidden = false;
  $('sign-out').hidden = false;
  $('who').textContent = session.clientId;
  const form = $<HTMLFormElement>('range');
  const select = form.elements.namedItem('environment') as HTMLSelectElement;
  select.replaceChildren(...session.environments.map((e) => new Option(e, e)));
  const params = new URLSearchParams(location.search);
  const today = new Date().toISOString().slice(0, 10);
  (form.elements.namedItem('to') as HTMLInputElement).value = params.get('to') ?? today;
  (form.elements.namedItem('from') as HTMLInputElement).value = params.get('from') ?? new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10);
  if (params.get('environment')) select.value = params.get('environment')!;
  form.onsubmit = (e) => {
    e.preventDefault();
    void load(session);
  };
  void load(session);
}

$<HTMLFormElement>('login').addEventListener('submit', (e) => {
  e.preventDefault();
  const form = e.target as HTMLFormElement;
  const id = (form.elements.namedItem('client_id') as HTMLInputElement).value;
  const secret = (form.elements.namedItem('client_secret') as HTMLInputElement).value;
  $('login-error').textContent = '';
  signIn(id, secret).then(showDashboard, (err: Error) => showLogin(`Sign-in failed: ${err.message}`));
});
$('sign-out').addEventListener('click', () => {
  sessionStorage.removeItem(SESSION_KEY);
  showLogin();
});

const session = readSession();
if (session) showDashboard(session);
else showLogin();
