import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

// The Agent page's allowed link domains: the only sites the agent's WhatsApp messages may link
// to (src/agent/outbound-guard.ts). Saved normalised, kept when a save omits them, bad ones named.

let app: TestApp;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let owner: AdminSession;
const agent = () => `/api/admin/workspaces/${ws.slug}/agent`;
const PERSONA = { agentName: 'Mia', company: 'Sunny Roofs', offer: 'solar panels', tone: 'warm' };
const draft = (over: Record<string, unknown> = {}) => ({
  persona: PERSONA,
  criteria: '',
  timeZone: 'Europe/Berlin',
  ...over,
});

before(async () => {
  app = await startTestApp();
  ws = await app.createWorkspace('whatsapp');
  const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'owner' }]);
  owner = (await signIn(app.http, op.email, op.password)).session!;
});
after(async () => {
  await app?.close();
});

describe('allowed link domains on the Agent page', () => {
  it('none until set; saved as host names; kept when a save leaves them out; emptied by an empty list', async () => {
    let got = await admin(app.http, owner, 'GET', agent());
    assert.equal(got.body.agent.allowedLinkDomains, undefined);
    let saved = await admin(app.http, owner, 'PUT', agent(), {
      version: got.body.version,
      ...draft({ allowedLinkDomains: ['https://WWW.SunnyRoofs.example/offer', 'book.example'] }),
    });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.deepEqual(saved.body.agent.allowedLinkDomains, ['sunnyroofs.example', 'book.example']);
    saved = await admin(app.http, owner, 'PUT', agent(), {
      version: saved.body.version,
      ...draft({ criteria: 'Owns a house' }),
    });
    assert.deepEqual(saved.body.agent.allowedLinkDomains, ['sunnyroofs.example', 'book.example']);
    saved = await admin(app.http, owner, 'PUT', agent(), {
      version: saved.body.version,
      ...draft({ allowedLinkDomains: [] }),
    });
    assert.equal(saved.status, 200);
    got = await admin(app.http, owner, 'GET', agent());
    assert.equal(got.body.agent.allowedLinkDomains, undefined);
  });

  it('names a value that is not a host name', async () => {
    const { version } = (await admin(app.http, owner, 'GET', agent())).body;
    const bad = await admin(app.http, owner, 'PUT', agent(), {
      version,
      ...draft({ allowedLinkDomains: ['not a domain'] }),
    });
    assert.equal(bad.status, 400);
    assert.ok(
      bad.body.issues.some(
        (i: { path: string[]; message: string }) => i.path[0] === 'allowedLinkDomains' && /host name/.test(i.message),
      ),
      JSON.stringify(bad.body),
    );
  });
});
