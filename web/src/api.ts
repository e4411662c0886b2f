// The admin API as the page calls it (the only server the page talks to). State-changing calls
// carry the session's CSRF token; a 401 anywhere means "sign in again".

import type { components } from './admin-api-types.ts';

// The API's shapes are generated from /openapi.json (admin-api-types.ts, `npm run client:generate`):
// the page's names for them are aliases, so a change of the API shows as a type error here.
export type Schemas = components['schemas'];
export type Session = Schemas['AdminSession'];
export type WorkspaceAccess = Session['workspaces'][number];
export type Permission = WorkspaceAccess['permissions'][number];
export type Inbox = Schemas['AdminInbox'];
export type InboxLead = Inbox['leads'][number];
export type Status = InboxLead['status'];
export type LeadPage = Schemas['AdminLeadPage'];

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: { message?: string; issues?: Array<{ path: string[]; message: string }> } = {},
  ) {
    super(message);
  }
}

let csrf = '';
export const setCsrf = (token: string) => (csrf = token);

export async function api<T>(
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
): Promise<T> {
  const headers: Record<string, string> = {};
  if (method !== 'GET') headers['x-csrf-token'] = csrf;
  if (body !== undefined || method === 'POST') headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body !== undefined || method === 'POST' ? { body: JSON.stringify(body ?? {}) } : {}),
  });
  const json = (await res.json().catch(() => ({}))) as {
    error?: string;
    message?: string;
    issues?: Array<{ path: string[]; message: string }>;
  };
  if (!res.ok)
    throw new ApiError(
      res.status,
      [json.error, ...(json.issues ?? []).map((i) => i.message)].filter(Boolean).join(' ') || `HTTP ${res.status}`,
      json,
    );
  return json as T;
}

// The live updates, with their reconnection, offline state and polling, are in live.ts.
export { watchWorkspace } from './live.ts';
