import { registerRoute } from '../../http/route-contract.ts';
import { leadEventsRoute } from './admin-contracts.ts';
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { OperatorService } from '../../operators/operator-service.ts';
import { can } from '../../operators/roles.ts';
import { AppError } from '../../shared/errors.ts';
import { requireMembership, requireSession } from '../admin-auth.ts';
import type { LiveEvents } from './live-events.ts';

// GET /api/admin/workspaces/:slug/events: Server-Sent Events of the workspace's changes
// (live-events.ts). Each event names what changed and which leads; the page refetches what it
// shows. After a reconnect (web/src/live-stream.ts retries forever) the page opens a new stream,
// whose first event, `ready`, tells the page to refetch: what happened while it was away is caught
// up that way (simpler and exact, where replaying by Last-Event-ID would need a stored event log).
//
// A stream outlives the request that checked its session, so each heartbeat checks again: the
// session (signed out, everywhere or here; expired) and the membership (removed from the
// workspace). When either is gone the stream gets an `end` event and is closed. The check does
// not count as use of the session: an open tab alone does not keep it from going idle.

export interface LiveRoutesDeps {
  operators: OperatorService;
  live: LiveEvents;
  /** Keep-alive comment and re-check of session and membership, this often. */
  heartbeatMs: number;
  /** Streams one session may hold open in this process; more are refused (429). */
  streamsPerSession: number;
}

export function liveRoutes(deps: LiveRoutesDeps) {
  const open = new Set<ServerResponse>();
  const perSession = new Map<string, number>();
  const release = (token: string) => {
    const n = (perSession.get(token) ?? 1) - 1;
    if (n > 0) perSession.set(token, n);
    else perSession.delete(token);
  };
  let closing = false;
  return async (scope: FastifyInstance): Promise<void> => {
    // Before the server closes, not after: it waits for every open connection, and a stream never
    // ends by itself, so shutdown hung while a page was open (its stream silent, the page unaware).
    // Ended at once, each page reconnects, with backoff, until the service answers again.
    scope.addHook('preClose', async () => {
      closing = true;
      for (const res of open) res.end();
    });
    registerRoute(scope, leadEventsRoute, async (request, reply) => {
      const session = await requireSession(deps.operators, request);
      const membership = requireMembership(session, request.params.slug, 'leads.read');
      const token = session.token;
      // Counted at once after the check, with no await between: concurrent opens cannot all pass.
      if ((perSession.get(token) ?? 0) >= deps.streamsPerSession) throw new AppError('too_many_streams');
      perSession.set(token, (perSession.get(token) ?? 0) + 1);
      const res = reply.raw;
      let unsubscribe: (() => void) | null = null;
      let heartbeat: NodeJS.Timeout | undefined;
      let ended = false;
      const cleanUp = () => {
        if (ended) return;
        ended = true;
        clearInterval(heartbeat);
        unsubscribe?.();
        open.delete(res);
        release(token);
      };
      // Registered first: a client gone while the subscription is made is still let go of.
      res.on('close', cleanUp);
      let seq = 0;
      const send = (event: string, data: unknown) =>
        res.write(`id: ${++seq}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      // A change while the subscription is being made is not sent: the `ready` below makes the page
      // refetch everything, and a write before writeHead would send Node's own headers instead.
      // `down`: changes may have gone unheard (live-events.ts). The stream is closed, and the page
      // says it is offline, reconnects and refetches: silence would look like nothing happening.
      let started = false;
      let down = false;
      try {
        unsubscribe = await deps.live.subscribe(membership.workspaceId, (e) => {
          if (e.kind === 'down') {
            down = true;
            if (started) res.end();
          } else if (started) send('change', { kind: e.kind, leadIds: e.leadIds });
        });
      } catch (err) {
        cleanUp();
        throw err;
      }
      if (down && !ended) {
        cleanUp();
        throw new AppError('service_busy', { retryAfterSeconds: 2 });
      }
      reply.hijack();
      // Gone, or opened while the server began to close: the page reconnects to its successor.
      if (ended || closing) {
        if (ended) unsubscribe();
        else cleanUp();
        res.destroy();
        return;
      }
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-request-id': request.id,
      });
      started = true;
      open.add(res);
      res.write('retry: 2000\n\n');
      // heartbeatMs: the page takes a stream silent for about twice as long for dead (a network change).
      send('ready', { kind: 'ready', leadIds: null, heartbeatMs: deps.heartbeatMs });

      let checking = false;
      const recheck = async () => {
        if (checking || res.writableEnded) return;
        checking = true;
        try {
          const now = await deps.operators.session(token, { touch: false });
          const still = now?.memberships.find((m) => m.workspaceId === membership.workspaceId);
          if (!now || !still || !can(still.role, 'leads.read')) {
            send('end', { kind: 'end', reason: now ? 'no_access' : 'signed_out' });
            res.end();
          }
        } catch {
          // The database is unreachable: the next heartbeat checks again.
        } finally {
          checking = false;
        }
      };
      heartbeat = setInterval(() => {
        res.write(': keep-alive\n\n');
        void recheck();
      }, deps.heartbeatMs);
      heartbeat.unref();
    });
  };
}
