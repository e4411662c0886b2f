import type { FastifyInstance } from 'fastify';

export interface Answer {
  status: number;
  body: any;
  headers: Record<string, string | number | string[] | undefined>;
}

/** POST /api/public/leads through the real app; `body` objects are sent as JSON. */
export async function postLead(
  http: FastifyInstance,
  key: string | null,
  body: unknown,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<Answer> {
  const res = await http.inject({
    method: 'POST',
    url: '/api/public/leads',
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
    ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: res.statusCode, body: safeJson(res.body), headers: res.headers };
}

export async function getLead(
  http: FastifyInstance,
  key: string | null,
  id: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await http.inject({
    method: 'GET',
    url: `/api/public/leads/${id}`,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
  });
  return { status: res.statusCode, body: safeJson(res.body), headers: res.headers };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

let phoneCounter = 0;
/** A phone number unique within this test process. */
export function uniquePhone(): string {
  phoneCounter += 1;
  return `+1 555 ${String(process.pid % 1000).padStart(3, '0')} ${String(phoneCounter).padStart(4, '0')}`;
}

export function validLead(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'Ada Lovelace', phone: uniquePhone(), consent: true, ...overrides };
}
