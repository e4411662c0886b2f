import type { FastifyInstance } from 'fastify';
import type { Role } from '../../src/operators/roles.ts';
import type { TestApp } from './test-app.ts';

// The admin API as a test drives it: operators made through the same service as the CLI, then
// signed in through POST /api/admin/session like the page.

export interface AdminSession {
  cookie: string;
  csrf: string;
}

export interface AdminAnswer {
  status: number;
  body: any;
  headers: Record<string, unknown>;
}

let n = 0;

/** A new operator with `role` in each workspace given; returns e-mail and password. */
export async function makeOperator(
  app: TestApp,
  memberships: Array<{ workspaceId: string; role: Role }>,
  name = `Operator ${++n}`,
) {
  const email = `op${process.pid}-${++n}@example.com`;
  const created = await app.operators.create(email, name);
  if (!created) throw new Error('operator exists');
  for (const m of memberships) await app.operators.addMembership(email, m.workspaceId, m.role);
  return { email, password: created.password, name };
}

export async function signIn(
  http: FastifyInstance,
  email: string,
  password: string,
  ip = '127.0.0.1',
): Promise<AdminAnswer & { session: AdminSession | null }> {
  const res = await http.inject({
    method: 'POST',
    url: '/api/admin/session',
    payload: { email, password },
    remoteAddress: ip,
  });
  const setCookie = res.headers['set-cookie'];
  const cookie = typeof setCookie === 'string' ? setCookie.split(';')[0]! : null;
  const body = res.json();
  return {
    status: res.statusCode,
    body,
    headers: res.headers,
    session: cookie && res.statusCode === 200 ? { cookie, csrf: body.csrfToken } : null,
  };
}

/** A request with the session's cookie and (unless `csrf: false`) its CSRF token. */
export async function admin(
  http: FastifyInstance,
  session: AdminSession | null,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  body?: unknown,
  opts: { csrf?: boolean } = {},
): Promise<AdminAnswer> {
  const headers: Record<string, string> = {};
  if (session) headers.cookie = session.cookie;
  if (session && opts.csrf !== false) headers['x-csrf-token'] = session.csrf;
  const res = await http.inject({
    method,
    url,
    headers,
    ...(body !== undefined ? { payload: body as object } : method === 'POST' ? { payload: {} } : {}),
  });
  let parsed: unknown = res.body;
  try {
    parsed = JSON.parse(res.body);
  } catch {
    // not JSON
  }
  return { status: res.statusCode, body: parsed, headers: res.headers };
}
