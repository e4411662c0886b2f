import { after, before } from 'node:test';
import type { Role } from '../../src/operators/roles.ts';
import { startVapiSimulator, type VapiSimulator } from '../../src/simulators/vapi/vapi-simulator.ts';
import { admin, makeOperator, signIn, type AdminAnswer, type AdminSession } from './admin.ts';
import { startTestApp, type TestApp } from './test-app.ts';

// The admin API tests' setup for the settings pages: the app with the Vapi simulator, a voice
// workspace with an operator of each role signed in, and an owner of another workspace (the
// outsider). Each test file that calls adminRolesSetup gets its own app (its before/after).

type Workspace = Awaited<ReturnType<TestApp['createWorkspace']>>;

export interface AdminRolesSetup {
  app: TestApp;
  sim: VapiSimulator;
  ws: Workspace;
  other: Workspace;
  sessions: Record<Role, AdminSession>;
  ops: Record<Role, { email: string; password: string; name: string }>;
  outsider: AdminSession;
  /** Every answer of the admin API in the file: the file checks none contains a secret. */
  answers: string[];
  /** An admin API call whose answer is kept in `answers`. */
  call(
    session: AdminSession | null,
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    body?: unknown,
    opts?: { csrf?: boolean },
  ): Promise<AdminAnswer>;
}

/** Registers the calling file's before/after; the fields are set once its before has run. */
export function adminRolesSetup(): AdminRolesSetup {
  const s = {
    sessions: {} as Record<Role, AdminSession>,
    ops: {} as Record<Role, { email: string; password: string; name: string }>,
    answers: [] as string[],
    async call(session, method, url, body, opts = {}) {
      const r = await admin(s.app.http, session, method, url, body, opts);
      s.answers.push(JSON.stringify(r.body), JSON.stringify(r.headers));
      return r;
    },
  } as AdminRolesSetup;

  before(async () => {
    s.sim = await startVapiSimulator();
    s.app = await startTestApp({
      env: { VAPI_BASE_URL: s.sim.url, PUBLIC_BASE_URL: 'https://leads.example.com', API_KEY_CACHE_TTL_MS: '60000' },
    });
    s.ws = await s.app.createWorkspace('voice');
    s.other = await s.app.createWorkspace('voice');
    for (const role of ['owner', 'admin', 'agent', 'viewer'] as const) {
      s.ops[role] = await makeOperator(s.app, [{ workspaceId: s.ws.workspaceId, role }]);
      s.sessions[role] = (await signIn(s.app.http, s.ops[role].email, s.ops[role].password)).session!;
    }
    const op = await makeOperator(s.app, [{ workspaceId: s.other.workspaceId, role: 'owner' }]);
    s.outsider = (await signIn(s.app.http, op.email, op.password)).session!;
  });

  after(async () => {
    await s.app?.close();
    await s.sim?.close();
  });

  return s;
}
