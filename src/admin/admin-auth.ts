import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Membership } from '../operators/operator-queries.ts';
import type { OperatorService, SignedIn } from '../operators/operator-service.ts';
import { can, type Permission } from '../operators/roles.ts';
import { AppError } from '../shared/errors.ts';
import { rememberOperator } from './audit-trail.ts';

// The dashboard's session cookie and the checks every admin request passes: signed in (401),
// CSRF token on state-changing requests (403), member of the workspace (404, as if it did not
// exist) with a role that allows the action (403).

export const SESSION_COOKIE = 'li_session';
export const CSRF_HEADER = 'x-csrf-token';

export function sessionToken(request: FastifyRequest): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === SESSION_COOKIE) return value.join('=') || null;
  }
  return null;
}

/** `Secure` when the service is reached over https (PUBLIC_BASE_URL); HttpOnly and SameSite=Lax always. */
export function sessionCookie(token: string, secure: boolean, maxAgeSeconds?: number): string {
  return [
    `${SESSION_COOKIE}=${token}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Lax',
    ...(secure ? ['Secure'] : []),
    ...(maxAgeSeconds !== undefined ? [`Max-Age=${maxAgeSeconds}`] : []),
  ].join('; ');
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean): void {
  void reply.header('set-cookie', sessionCookie('', secure, 0));
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The signed-in operator of the request (CSRF checked for state-changing methods). */
export async function requireSession(
  operators: OperatorService,
  request: FastifyRequest,
): Promise<SignedIn & { token: string }> {
  const token = sessionToken(request);
  const session = token ? await operators.session(token) : null;
  if (!token || !session) throw new AppError('not_signed_in');
  if (!SAFE_METHODS.has(request.method) && request.headers[CSRF_HEADER] !== session.csrfToken)
    throw new AppError('csrf_failed');
  rememberOperator(request, session);
  return { ...session, token };
}

/** The operator's membership of the workspace named by `slug`, allowed to do `permission`. */
export function requireMembership(session: SignedIn, slug: string, permission: Permission): Membership {
  const membership = session.memberships.find((m) => m.slug === slug);
  if (!membership) throw new AppError('workspace_not_found');
  if (!can(membership.role, permission)) throw new AppError('forbidden');
  return membership;
}
