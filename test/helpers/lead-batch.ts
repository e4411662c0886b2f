import { RateLimiter } from '../../src/auth/rate-limiter.ts';
import type { Queryable } from '../../src/db/pool.ts';
import { leadBatchStatement, type LeadOp, type LeadOpResult } from '../../src/leads/lead-batch-statement.ts';
import type { NewLead } from '../../src/leads/lead-queries.ts';
import type { Clock } from '../../src/shared/clock.ts';
import { uniquePhone } from './http.ts';

// The public API's batch (RateLimiter with the lead batch statement) driven directly, for tests
// that count its statements: test/cross-key-batching.test.ts, test/rate-limiter-connection-loss.test.ts.

/**
 * A RateLimiter on `db` that records the name of every statement it sends. `leases`: every request
 * may be admitted from a lease, as src/app.ts sets up the public API's limiter.
 */
export function recordingLimiter(db: Queryable, clock: Clock, leases = false) {
  const statements: string[] = [];
  const recording: Queryable = { query: ((config: { name?: string }, values?: unknown[]) => {
    statements.push(config.name ?? 'unnamed');
    return db.query(config as never, values as never);
  }) as Queryable['query'] };
  return { statements, limiter: new RateLimiter<LeadOp, LeadOpResult>(recording, clock, leadBatchStatement, leases ? () => true : undefined) };
}

/** A new phone number, already in E.164. */
export const e164Phone = () => `+${uniquePhone().replace(/\D/g, '')}`;

/** A WhatsApp lead of the workspace, live, as a POST would make it. */
export function newLead(workspaceId: string, phone: string): NewLead {
  return {
    workspaceId, name: 'Batch Lead', phone, phoneNormalized: phone, email: null, goal: null, consentIp: null,
    consentUserAgent: null, metadata: {}, formResponses: {}, createdEvent: { channel: 'whatsapp' }, livemode: true, apiKeyId: null,
  };
}

/** The batch op inserting that lead. */
export const insertOp = (workspaceId: string, phone: string): LeadOp => ({ kind: 'insert', lead: newLead(workspaceId, phone) });
