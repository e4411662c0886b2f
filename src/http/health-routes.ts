import type { FastifyInstance } from 'fastify';
import type { Pool } from '../db/pool.ts';
import { readMigrations } from '../db/migrate.ts';
import { DatabaseReadiness } from '../db/readiness.ts';
import type { PressureReport } from './overload-guard.ts';

/**
 * Liveness (the process answers) and readiness (the database answers, its schema has every
 * migration this code knows, and the process is not shedding load; docs/RELIABILITY.md). Both
 * report the pressure (overload-guard.ts); neither is ever shed itself.
 */
export function healthRoutes(pool: Pool, pressure: () => PressureReport) {
  return async (scope: FastifyInstance): Promise<void> => {
    const database = new DatabaseReadiness(pool, { schemaVersions: migrationVersions() });
    scope.get('/healthz', async () => ({ ok: true, pressure: pressure() }));
    scope.get('/readyz', async (_request, reply) => {
      const state = await database.state();
      if (state === 'unreachable') {
        void reply.status(503);
        return { ok: false, error: 'Database unavailable.' };
      }
      if (state === 'schema_behind') {
        void reply.status(503);
        return { ok: false, error: 'Database schema is not current; run `leadintake migrate`.' };
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

let versions: number[] | undefined;
/** The migrations shipped with this code, read once per process (every app of a test run shares them). */
function migrationVersions(): number[] {
  versions ??= readMigrations().map((m) => m.version);
  return versions;
}
