import assert from 'node:assert/strict';
import { test } from 'node:test';
import { transitionLead } from '../../src/leads/lead-state.ts';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { setUpWhatsappTurns } from '../helpers/whatsapp-turn-setup.ts';

// The inbox's Unread filter (docs/DASHBOARD.md, "Inbox"): `unread=true` lists every lead that
// wrote since the operator last opened it, whatever its status, so a booked lead's "can we move
// it?" is found although it raises no alert; the tab counts are of the same leads. Read markers
// are per operator, and another workspace's leads never appear.

const { setup: env, leadWithTemplate } = setUpWhatsappTurns();

type Inbox = {
  leads: { id: string; unread: boolean }[];
  counts: Record<string, number>;
};

const booked = async (leadId: string) =>
  assert.ok(
    (await transitionLead(env.h.app.db.pool, { leadId, to: 'booked', actor: 'operator', event: { type: 'test' } })).ok,
  );

async function inbox(op: AdminSession, query: string): Promise<Inbox> {
  const r = await admin(env.h.app.http, op, 'GET', `/api/admin/workspaces/${env.tw.slug}/leads?limit=100&${query}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body as Inbox;
}

test('unread=true lists and counts a booked lead that wrote, not an answered one nor another workspace', async () => {
  const { h, tw, mt } = env;
  const both = [
    { workspaceId: tw.workspaceId, role: 'owner' as const },
    { workspaceId: mt.workspaceId, role: 'owner' as const },
  ];
  const [a, b] = [await makeOperator(h.app, both), await makeOperator(h.app, both)];
  const ada = (await signIn(h.app.http, a.email, a.password)).session!;
  const bob = (await signIn(h.app.http, b.email, b.password)).session!;

  const moving = await leadWithTemplate();
  const answered = await leadWithTemplate();
  const quiet = await leadWithTemplate();
  const elsewhere = await leadWithTemplate(mt);
  for (const l of [moving, answered, quiet, elsewhere]) await booked(l.leadId);
  await h.leadSays('twilio', tw.slug, moving.phone, "I can't make Thursday, can we move it?");
  await h.leadSays('twilio', tw.slug, answered.phone, 'Is parking included?');
  await h.leadSays('meta', mt.slug, elsewhere.phone, "I can't make Friday");
  await h.settle();
  // Ada opens the answered lead and replies.
  const page = `/api/admin/workspaces/${tw.slug}/leads/${answered.leadId}`;
  assert.equal((await admin(h.app.http, ada, 'GET', page)).status, 200);
  const reply = await admin(h.app.http, ada, 'POST', `${page}/reply`, { text: 'Yes, it is.' });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));

  const all = await inbox(ada, '');
  assert.equal(all.leads.length, 3, 'the unfiltered list holds every lead of the workspace');
  const unread = await inbox(ada, 'unread=true');
  assert.deepEqual(
    unread.leads.map((l) => [l.id, l.unread]),
    [[moving.leadId, true]],
  );
  assert.deepEqual(unread.counts, { new: 0, in_conversation: 0, booked: 1, unqualified: 0, needs_human: 0, all: 1 });
  assert.deepEqual(
    (await inbox(ada, 'unread=true&status=booked')).leads.map((l) => l.id),
    [moving.leadId],
  );
  assert.deepEqual((await inbox(ada, 'unread=true&status=new')).leads, []);
  assert.ok(!unread.leads.some((l) => l.id === elsewhere.leadId || l.id === quiet.leadId));

  // Bob has opened neither: both are unread for him.
  const bobs = await inbox(bob, 'unread=true');
  assert.deepEqual(bobs.leads.map((l) => l.id).sort(), [moving.leadId, answered.leadId].sort());
  assert.equal(bobs.counts.all, 2);

  // The answered lead writes again, a minute later: unread for Ada again.
  h.clock.advance(60_000);
  await h.leadSays('twilio', tw.slug, answered.phone, 'Thanks!');
  await h.settle();
  assert.deepEqual(
    (await inbox(ada, 'unread=true')).leads.map((l) => l.id).sort(),
    [moving.leadId, answered.leadId].sort(),
  );
});
