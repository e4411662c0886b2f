import type { FastifyInstance } from 'fastify';
import type { Pool } from '../db/pool.ts';
import { DatabaseReadiness } from '../db/readiness.ts';
import type { PressureReport } from './overload-guard.ts';

/**
 * Liveness (the process answers) and readiness (the database answers and the process is not
 * shedding load; docs/RELIABILITY.md). Both report the pressure (overload-guard.ts); neither is
 * ever shed itself.
 */
export function healthRoutes(pool: Pool, pressure: () => PressureReport) {
  return async (scope: FastifyInstance): Promise<void> => {
    const database = new DatabaseReadiness(pool);
    scope.get('/healthz', async () => ({ ok: true, pressure: pressure() }));
    scope.get('/readyz', async (_request, reply) => {
      if (!(await database.ready())) {
        void reply.status(503);
        return { ok: false, error: 'Database unavailable.' };
      }
      const now = pressure();
      // A load balancer sends new traffic elsewhere while this process refuses it.
      if (now.underPressure) {
        void reply.status(503);
        return { ok: false, error: 'Service is busy; retry shortly.', pressure: now };
      }
      return { ok: true, pressure: now };
    });
  };
}
