import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../shared/clock.ts';
import { AppError } from '../shared/errors.ts';
import { sessionToken } from './admin-auth.ts';

// The admin API's rate limit per session (ADMIN_RATE_LIMIT_PER_MINUTE): a signed-in operator, or
// a script with a session cookie, cannot make the service run expensive reads (searches, analytics,
// logs) without bound. A fixed window of one minute per session, counted before anything else the
// request does (no database work for a refused request), in memory: each process counts on its
// own, so with N `serve` processes a session gets up to N times the limit. The live-update stream
// counts when it opens; its long-lived connection is not a request and costs nothing more here.
// Requests without a session cookie are throttled where they are handled: sign-in and an
// invitation's new account per client address (sign-in-throttle.ts), before any password hash;
// the invitation look-up is one indexed read. A made-up cookie is counted like a real one and
// answered 401 by the route.

const WINDOW_MS = 60_000;
/** Sessions counted per window at most: memory stays bounded under a flood of made-up cookies. */
const MAX_SESSIONS_PER_WINDOW = 50_000;

export function installAdminRateLimit(http: FastifyInstance, o: { perMinute: number; clock: Clock }): void {
  if (o.perMinute === 0) return;
  let window = -1;
  let counts = new Map<string, number>();
  http.addHook('onRequest', async (request) => {
    if (!request.url.startsWith('/api/admin/')) return;
    const token = sessionToken(request);
    if (!token) return;
    const now = o.clock().getTime();
    const current = Math.floor(now / WINDOW_MS);
    if (current !== window) {
      window = current;
      counts = new Map();
    }
    // Keyed by a digest, so the map holds no session token.
    const key = createHash('sha256').update(token).digest('base64url').slice(0, 22);
    const n = (counts.get(key) ?? 0) + 1;
    if (n > o.perMinute) {
      throw new AppError('rate_limited', {
        retryAfterSeconds: Math.max(1, Math.ceil(((current + 1) * WINDOW_MS - now) / 1000)),
      });
    }
    if (counts.size < MAX_SESSIONS_PER_WINDOW || counts.has(key)) counts.set(key, n);
  });
}
