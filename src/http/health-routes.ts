import type { FastifyInstance } from 'fastify';
import type { Pool } from '../db/pool.ts';

/** Liveness (the process answers) and readiness (the database answers). */
export function healthRoutes(pool: Pool) {
  return async function (scope: FastifyInstance): Promise<void> {
    scope.get('/healthz', async () => ({ ok: true }));
    scope.get('/readyz', async (_request, reply) => {
      try {
        await pool.query('SELECT 1');
        return { ok: true };
      } catch {
        void reply.status(503);
        return { ok: false, error: 'Database unavailable.' };
      }
    });
  };
}
