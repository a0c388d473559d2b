// Same-run baseline of the wrk benches (http, events, recommendations): a bare uWebSockets.js
// JSON responder, the floor that uWS plus Node reach on this machine with no routing, auth,
// validation or storage. GET answers a small JSON object; PUT/POST reads the whole body, then
// answers 200 with no content (as the service's item PUT and event POST do), except a POST to
// `/api/*/recommendations/requests` (bench/recommendations.bench.ts), which reads the body and
// answers a fixed JSON object of a recommendation response's shape and size (two lists of 10
// items), without parsing the body.
// Prints `{"port":N}` on stdout once listening; stops on SIGTERM/SIGINT.
// Run alone: node --import tsx bench/baseline.ts   (PORT=0 by default: a free port)
import uws, { type HttpResponse, type TemplatedApp } from '@trufflesuite/uws-js-unofficial';

const ITEM = JSON.stringify({
  environment: 'demo',
  item_type: 'article',
  item_id: 'baseline',
  title: 'A bare uWebSockets.js responder',
  tags: ['baseline'],
});

/** SPEC.md's recommendation response for two lists of 10, as the service answers them. */
const RECOMMENDATIONS = JSON.stringify({
  request_id: '0190a4c2-8a5e-7c3b-9f1d-2b6e4a8c0d1f',
  user_group: 'affinity',
  device_id: 'd1',
  user_id: 'u1',
  lists: ['recommended_for_you', 'more_like_this'].map((list_name) => ({
    list_name,
    list_key: '0190a4c2-8a5e-7c3b-9f1d-2b6e4a8c0d20',
    list_size: 10,
    limit: 10,
    items: Array.from({ length: 10 }, (_, i) => ({ item_id: `i${10_000 + i}`, rank: i + 1 })),
  })),
});

const app = uws.App();

app.get('/*', (res) => {
  res.cork(() => {
    res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(ITEM);
  });
});

const readThenOk = (res: HttpResponse) => {
  let aborted = false;
  res.onAborted(() => (aborted = true));
  res.onData((_chunk, isLast) => {
    if (isLast && !aborted) res.cork(() => res.writeStatus('200 OK').end());
  });
};
const readThenJson = (res: HttpResponse) => {
  let aborted = false;
  res.onAborted(() => (aborted = true));
  res.onData((_chunk, isLast) => {
    if (isLast && !aborted) {
      res.cork(() => res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(RECOMMENDATIONS));
    }
  });
};
app.put('/*', readThenOk);
// uWS tries static and parameter segments before a wildcard, whatever the registration order.
app.post('/api/:environment/recommendations/requests', readThenJson);
app.post('/*', readThenOk);

app.listen('127.0.0.1', Number(process.env.PORT ?? 0), (socket) => {
  if (!socket) {
    console.error('baseline: cannot listen');
    process.exit(1);
  }
  console.log(JSON.stringify({ port: uws.us_socket_local_port(socket) }));
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      uws.us_listen_socket_close(socket);
      (app as TemplatedApp & { close(): void }).close();
      process.exit(0);
    });
  }
});
