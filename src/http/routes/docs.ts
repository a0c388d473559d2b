/**
 * @module http/routes/docs
 * GET /api/openapi.json (the document of every route registered before this call) and the
 * documentation page GET /docs: Swagger UI served from node_modules/swagger-ui-dist, no CDN.
 * Register last (before the fallback): the document is built here from the routes registered
 * so far and fails the start when one is undocumented.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { E } from '../../domain/errors.ts';
import { buildOpenApi } from '../openapi/document.ts';
import { sendBody } from '../respond.ts';
import type { HttpServer } from '../server.ts';

/** The Swagger UI files the page loads, with their media types. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Affinity API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
  <div id="ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script>window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#ui', deepLinking: true });</script>
</body>
</html>
`;

export function registerDocsRoutes(server: HttpServer, version: string): void {
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const assets = new Map(Object.entries(ASSETS).map(([name, type]) => [name, { type, bytes: readFileSync(join(dir, name)) }]));
  let document = '';
  server.route('get', '/api/openapi.json', { status: {} }, (ex) => sendBody(ex, 200, 'application/json', document));
  server.route('get', '/docs', { status: {} }, (ex) => sendBody(ex, 200, 'text/html; charset=utf-8', PAGE));
  server.route('get', '/docs/:asset', { status: { notFound: 404 } }, (ex, req) => {
    const asset = assets.get(req.params[0] ?? '');
    if (!asset) throw E.notFound(req.url);
    sendBody(ex, 200, asset.type, asset.bytes, { 'Cache-Control': 'public, max-age=86400' });
  });
  document = JSON.stringify(buildOpenApi(server.routes, version));
}
