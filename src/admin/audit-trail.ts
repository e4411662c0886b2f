import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Queryable } from '../db/pool.ts';
import type { SignedIn } from '../operators/operator-service.ts';
import type { Logger } from '../shared/logger.ts';

// The audit log of operator actions (docs/DASHBOARD.md, "Audit log"): who did what, when. An admin
// route opts in by naming its action in its config — `{ config: { audit: 'key.created' } }` — and
// every successful (2xx) request to it writes one `audit_events` row (migration 008) before its
// answer leaves, so an operator never sees "done" for an action the log does not hold. No body is
// recorded: the row says who, what, which workspace and which id, never personal data or secrets.

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The audit log's name for what a successful request to this route did (e.g. `key.revoked`). */
    audit?: string;
  }
}

const sessions = new WeakMap<FastifyRequest, SignedIn>();
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Remembers who made the request (requireSession calls this), for the audit row. */
export function rememberOperator(request: FastifyRequest, session: SignedIn): void {
  sessions.set(request, session);
}

/** The actor as the audit log names it: `operator:<id>`; the CLI writes `cli:<os user>`. */
export const operatorActor = (operatorId: string) => `operator:${operatorId}`;

/** An onSend hook: writes the audit row of a successful audited request. */
export function auditTrail(db: Queryable, log: Logger) {
  return async (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    const type = request.routeOptions.config?.audit;
    if (!type || reply.statusCode >= 300) return payload;
    const session = sessions.get(request);
    if (!session) return payload;
    const params = (request.params ?? {}) as Record<string, string | undefined>;
    const workspace = session.memberships.find((m) => m.slug === params.slug);
    const subject = params.id && UUID.test(params.id) ? params.id : null;
    try {
      await db.query(
        `INSERT INTO audit_events (workspace_id, type, subject_id, actor, data) VALUES ($1, $2, $3, $4, '{}')`,
        [workspace?.workspaceId ?? null, type, subject, operatorActor(session.operator.id)],
      );
    } catch (err) {
      // The action itself is done and committed; its answer must say so. The failure is logged.
      log.error({ err, auditType: type }, 'audit log row not written');
    }
    return payload;
  };
}
