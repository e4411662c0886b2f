import { RateLimiter } from '../../src/auth/rate-limiter.ts';
import type { Queryable } from '../../src/db/pool.ts';
import { LeadBatches } from '../../src/leads/lead-batch-statement.ts';
import type { NewLead } from '../../src/leads/lead-queries.ts';
import type { Clock } from '../../src/shared/clock.ts';
import { uniquePhone } from './http.ts';

// The public API's batches driven directly, for tests that count their statements: the count
// (RateLimiter) and the leads' inserts and reads (LeadBatches). test/api/cross-key-batching.test.ts,
// test/api/rate-limiter-connection-loss.test.ts.

/** `db`, recording the name of every statement sent through it. */
function recording(db: Queryable): { statements: string[]; db: Queryable } {
  const statements: string[] = [];
  const query = ((config: { name?: string }, values?: unknown[]) => {
    statements.push(config.name ?? 'unnamed');
    return db.query(config as never, values as never);
  }) as Queryable['query'];
  return { statements, db: { query } };
}

/** A RateLimiter on `db` that records the name of every statement it sends. */
export function recordingLimiter(db: Queryable, clock: Clock) {
  const r = recording(db);
  return { statements: r.statements, limiter: new RateLimiter(r.db, clock) };
}

/** The public API's lead batches on `db`, recording the name of every statement they send. */
export function recordingBatches(db: Queryable) {
  const r = recording(db);
  return { statements: r.statements, batches: new LeadBatches(r.db) };
}

/** A new phone number, already in E.164. */
export const e164Phone = () => `+${uniquePhone().replace(/\D/g, '')}`;

/** A WhatsApp lead of the workspace, live, as a POST would make it. */
export function newLead(workspaceId: string, phone: string): NewLead {
  return {
    workspaceId,
    name: 'Batch Lead',
    phone,
    phoneNormalized: phone,
    email: null,
    goal: null,
    consentIp: null,
    consentUserAgent: null,
    metadata: {},
    formResponses: {},
    createdEvent: { channel: 'whatsapp' },
    livemode: true,
    apiKeyId: null,
  };
}
