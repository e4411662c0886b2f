import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../shared/errors.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';

// GET /forms/<slug>/embed.js: the embed snippet's script (embed-script.ts, docs/INTAKE.md). The
// same script for every workspace (it reads the slug from its own URL). Sites
// load it on every page view, so it may be cached, briefly: a fix reaches them within minutes.

import { EMBED_SCRIPT } from './embed-script.ts';

export { EMBED_SCRIPT };
const ETAG = `"${crypto.createHash('sha256').update(EMBED_SCRIPT).digest('base64url').slice(0, 22)}"`;
const MAX_AGE_SECONDS = 300;

export function embedRoutes(deps: { workspaces: Pick<WorkspaceService, 'findBySlug'> }) {
  return async (scope: FastifyInstance): Promise<void> => {
    scope.get<{ Params: { slug: string } }>('/forms/:slug/embed.js', async (request, reply) => {
      // An unknown workspace is a 404, so a typo in the snippet shows in the site's console.
      if (!(await deps.workspaces.findBySlug(request.params.slug))) throw new AppError('route_not_found');
      void reply.headers({
        'content-type': 'text/javascript; charset=utf-8',
        'cache-control': `public, max-age=${MAX_AGE_SECONDS}`,
        etag: ETAG,
        // Loaded by other sites' pages, also those that isolate themselves (COEP).
        'cross-origin-resource-policy': 'cross-origin',
      });
      if (request.headers['if-none-match'] === ETAG) return reply.status(304).send();
      return reply.send(EMBED_SCRIPT);
    });
  };
}
