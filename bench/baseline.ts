// Same-run baseline of bench/http.bench.ts: a bare uWebSockets.js JSON responder, the floor that
// uWS plus Node reach on this machine with no routing, auth, validation or storage. GET answers a
// small JSON object; PUT/POST reads the whole body, then answers 200 with no content (as the
// service's item PUT does). Prints `{"port":N}` on stdout once listening; stops on SIGTERM/SIGINT.
// Run alone: node --import tsx bench/baseline.ts   (PORT=0 by default: a free port)
import uws, { type HttpResponse, type TemplatedApp } from '@trufflesuite/uws-js-unofficial';

const ITEM = JSON.stringify({
  environment: 'demo',
  item_type: 'article',
  item_id: 'baseline',
  title: 'A bare uWebSockets.js responder',
  tags: ['baseline'],
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
app.put('/*', readThenOk);
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
