// The admin API as the page calls it (the only server the page talks to). State-changing calls
// carry the session's CSRF token; a 401 anywhere means "sign in again".

export type Status = 'new' | 'in_conversation' | 'booked' | 'unqualified' | 'needs_human';
export type Permission =
  | 'leads.read' | 'leads.act' | 'leads.delete' | 'webhooks.manage'
  | 'settings.read' | 'settings.manage' | 'keys.manage' | 'team.manage' | 'logs.read' | 'jobs.retry' | 'audit.read' | 'analytics.read';

export interface WorkspaceAccess {
  slug: string;
  name: string;
  channel: 'voice' | 'whatsapp';
  role: string;
  permissions: Permission[];
}

export interface Session {
  operator: { id: string; email: string; name: string };
  csrfToken: string;
  workspaces: WorkspaceAccess[];
}

export interface InboxLead {
  id: string;
  name: string;
  phone: string;
  email: string | null;
  status: Status;
  livemode: boolean;
  createdAt: string;
  lastActivityAt: string;
  speedToLeadSeconds: number | null;
  /** The agent, the operator who took the lead over, or nobody (waiting for a person). */
  owner: { kind: 'ai' } | { kind: 'nobody' } | { kind: 'operator'; id: string; name: string };
  /** Since when the lead waits for a person (needs_human). */
  waitingSince: string | null;
  /** The lead wrote after this operator last opened it. */
  unread: boolean;
}

export interface Inbox {
  leads: InboxLead[];
  nextCursor: string | null;
  counts: Record<Status | 'all', number>;
  countCap: number;
  /** The workspace's waiting thresholds (inbox settings). */
  waiting: { amberMinutes: number; redMinutes: number };
  /** Whether sandbox leads are shown (the API's default when the page did not choose). */
  sandbox: boolean;
}

export interface LeadPage {
  lead: {
    id: string; workspaceSlug: string; channel: 'voice' | 'whatsapp'; status: Status; livemode: boolean; name: string; phone: string;
    email: string | null; goal: string | null; qualificationNotes: string | null; agentNotes?: string | null;
    answers: Array<{ id: string; label: string | null; value: string }>;
    metadata: Record<string, unknown>; formAnswers: Array<{ id: string; label: string | null; value: unknown }>;
    consent: { at: string; ip: string | null; userAgent: string | null }; bookingUid: string | null; bookingStart: string | null;
    optedOutAt: string | null; createdAt: string; updatedAt: string;
    apiKey: { name: string; prefix: string } | null;
  };
  owner: InboxLead['owner'];
  timeZone: string | null;
  whatsappWindow: { open: boolean; until: string | null; template?: string | null } | null;
  timeline: Array<{ id: number; type: string; data: Record<string, unknown>; at: string }>;
  /** The lead page carries the newest 50 messages and events; these fetch the older ones (lead-history.tsx). */
  timelineOlderCursor: string | null;
  messagesOlderCursor: string | null;
  messages: Array<{ id: number; direction: 'inbound' | 'outbound'; kind: string; body: string; status: string; errorCode: string | null; errorMessage: string | null; createdAt: string }>;
  calls: Array<{ providerCallId: string; status: string; startedAt: string | null; durationSeconds: number | null; endedReason: string | null; summary: string | null; transcript: string | null; transcriptTurns: Array<{ speaker: 'Assistant' | 'Lead'; text: string }>; recordingUrl: string | null }>;
}

export class ApiError extends Error {
  constructor(readonly status: number, message: string, readonly body: { message?: string; issues?: Array<{ path: string[]; message: string }> } = {}) {
    super(message);
  }
}

let csrf = '';
export const setCsrf = (token: string) => (csrf = token);

export async function api<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (method !== 'GET') headers['x-csrf-token'] = csrf;
  if (body !== undefined || method === 'POST') headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, credentials: 'same-origin', ...(body !== undefined || method === 'POST' ? { body: JSON.stringify(body ?? {}) } : {}) });
  const json = (await res.json().catch(() => ({}))) as { error?: string; message?: string; issues?: Array<{ path: string[]; message: string }> };
  if (!res.ok) throw new ApiError(res.status, [json.error, ...(json.issues ?? []).map((i) => i.message)].filter(Boolean).join(' ') || `HTTP ${res.status}`, json);
  return json as T;
}

// The live updates, with their reconnection, offline state and polling, are in live.ts.
export { watchWorkspace } from './live.ts';
