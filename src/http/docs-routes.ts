import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';

// GET /docs: the API reference, rendered in the browser by Swagger UI from /openapi.json. Swagger
// UI's files come from the swagger-ui-dist package and are served by the service itself, so the
// page works offline and behind firewalls (no CDN).

const ASSET_DIR = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

// The only files served from the package, with their types: nothing else of node_modules is
// reachable through this route.
const ASSETS: Record<string, string> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>leadintake API reference</title>
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <main id="swagger-ui"></main>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io.
// Operations start collapsed ('list') except the public API's (tag Leads), opened once the
// document is loaded: an integrator lands on the two operations they need, in full, and the
// dashboard's many admin operations do not all render expanded (that took Swagger UI over 20 s).
const INIT = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  deepLinking: true,
  validatorUrl: null,
  onComplete: function () {
    var paths = window.ui.specSelectors.specJson().get('paths');
    paths.forEach(function (item) {
      item.forEach(function (op) {
        if (op && op.get && op.get('tags') && op.get('tags').includes('Leads')) {
          window.ui.layoutActions.show(['operations', 'Leads', op.get('operationId')], true);
        }
      });
    });
  },
});
`;

export function docsRoutes() {
  return async (scope: FastifyInstance): Promise<void> => {
    scope.get('/docs', async (_request, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
    scope.get('/docs/init.js', async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(INIT));
    scope.get<{ Params: { file: string } }>('/docs/assets/:file', async (request, reply) => {
      const type = Object.hasOwn(ASSETS, request.params.file) ? ASSETS[request.params.file] : undefined;
      if (!type) return reply.callNotFound();
      // Streamed from disk rather than held in memory: the bundle is 1.7 MB and rarely asked for.
      return reply
        .type(type)
        .header('cache-control', 'public, max-age=86400')
        .send(fs.createReadStream(path.join(ASSET_DIR, request.params.file)));
    });
  };
}
