// The setup shared by the admin API tests: the real app on a test clock (three sign-in failures
// allowed, 30-minute idle sessions), a workspace with one form question, a second workspace, and
// signed-in operators per role. Each test file calls setUpAdminApi() once and gets its own app
// and database.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import type { Role } from '../../src/operators/roles.ts';
import { makeOperator, signIn, type AdminSession } from './admin.ts';
import { postLead, validLead } from './http.ts';
import { startTestApp, TestClock, type TestApp } from './test-app.ts';

type Workspace = Awaited<ReturnType<TestApp['createWorkspace']>>;

/** Registers the file's before/after hooks; the returned fields are set once `before` has run. */
export function setUpAdminApi() {
  const s = {} as {
    app: TestApp;
    ws: Workspace;
    other: Workspace;
  };
  const clock = new TestClock();
  const sessions = {} as Record<Role, AdminSession>;
  const names = {} as Record<Role, string>;

  const leadsUrl = () => `/api/admin/workspaces/${s.ws.slug}/leads`;
  let phoneSeq = 0;
  async function newLead(over: Record<string, unknown> = {}, key = s.ws.apiKey): Promise<string> {
    const r = await postLead(
      s.app.http,
      key,
      validLead({ phone: `+4930${String(9_000_000 + ++phoneSeq).padStart(8, '0')}`, ...over }),
    );
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.leadId;
  }

  before(async () => {
    s.app = await startTestApp({ clock, env: { SIGN_IN_MAX_FAILURES: '3', SESSION_IDLE_MINUTES: '30' } });
    s.ws = await s.app.createWorkspace('whatsapp', {
      agent: {
        persona: { agentName: 'Mia', company: 'Acme', offer: 'solar', tone: 'warm' },
        criteria: 'owns a house',
        timeZone: 'Europe/Berlin',
        questions: [
          { id: 'q_owner', label: 'Do you own the property?', type: 'choice', options: ['Yes', 'No'], required: true },
        ],
      },
    } as never);
    s.other = await s.app.createWorkspace('whatsapp');
  });

  /** One signed-in operator per role of `ws` (sign in after any test that moves the clock: it ends idle sessions). */
  async function signInEveryRole(): Promise<void> {
    for (const role of ['owner', 'admin', 'agent', 'viewer'] as const) {
      const op = await makeOperator(s.app, [{ workspaceId: s.ws.workspaceId, role }], `The ${role}`);
      const r = await signIn(s.app.http, op.email, op.password);
      assert.equal(r.status, 200);
      sessions[role] = r.session!;
      names[role] = op.name;
    }
  }
  after(() => s.app.close());

  return { setup: s as Readonly<typeof s>, clock, sessions, names, leadsUrl, newLead, signInEveryRole };
}
