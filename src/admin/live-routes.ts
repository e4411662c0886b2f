import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { OperatorService } from '../operators/operator-service.ts';
import { requireMembership, requireSession } from './admin-auth.ts';
import type { LiveEvents } from './live-events.ts';

// GET /api/admin/workspaces/:slug/events: Server-Sent Events of the workspace's changes
// (live-events.ts). Each event names what changed and which leads; the page refetches what it
// shows. After a reconnect the browser's EventSource opens a new stream, whose first event,
// `ready`, tells the page to refetch: what happened while it was away is caught up that way
// (simpler and exact, where replaying by Last-Event-ID would need a stored event log).

const HEARTBEAT_MS = 25_000;

export function liveRoutes(deps: { operators: OperatorService; live: LiveEvents }) {
  const open = new Set<ServerResponse>();
  return async function (scope: FastifyInstance): Promise<void> {
    scope.addHook('onClose', async () => {
      for (const res of open) res.end();
    });
    scope.get<{ Params: { slug: string } }>('/api/admin/workspaces/:slug/events', async (request, reply) => {
      const session = await requireSession(deps.operators, request);
      const membership = requireMembership(session, request.params.slug, 'leads.read');
      const res = reply.raw;
      reply.hijack();
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-request-id': request.id,
      });
      open.add(res);
      let seq = 0;
      const send = (event: string, data: unknown) => res.write(`id: ${++seq}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      const unsubscribe = await deps.live.subscribe(membership.workspaceId, (e) => send(e.kind === 'resync' ? 'ready' : 'change', { kind: e.kind, leadIds: e.leadIds }));
      res.write('retry: 2000\n\n');
      send('ready', { kind: 'ready', leadIds: null });
      const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
      heartbeat.unref();
      res.on('close', () => {
        clearInterval(heartbeat);
        unsubscribe();
        open.delete(res);
      });
    });
  };
}
