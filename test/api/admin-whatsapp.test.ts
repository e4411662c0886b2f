import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { OPERATOR_NOTE } from '../../src/whatsapp/chat-history.ts';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

// The dashboard's actions on a WhatsApp conversation, end to end with the provider and model
// simulators: take over stops the agent, an operator's reply goes out through the agent's own
// outbound path (delivery statuses included), Resume AI hands back with the person's words in the
// agent's context; and the live updates (NOTIFY → SSE), reconnection included.

let h: WhatsappHarness;
let ws: { slug: string; apiKey: string; workspaceId: string };
let session: AdminSession;
const OPERATOR = 'Sam Operator';

before(async () => {
  h = await startWhatsappHarness();
  ws = await h.workspace('twilio');
  const op = await makeOperator(h.app, [{ workspaceId: ws.workspaceId, role: 'agent' }], OPERATOR);
  session = (await signIn(h.app.http, op.email, op.password)).session!;
});
after(() => h.close());

const leadUrl = (id: string) => `/api/admin/workspaces/${ws.slug}/leads/${id}`;
const outbound = async (leadId: string) =>
  (
    await h.app.db.pool.query(
      `SELECT m.body, m.kind, m.status, t.kind AS turn_kind
        FROM whatsapp_messages m JOIN agent_turns t ON t.id = m.turn_id
     WHERE m.lead_id = $1 AND m.direction = 'outbound' ORDER BY m.id`,
      [leadId],
    )
  ).rows;
const status = async (leadId: string) =>
  (await h.app.db.pool.query('SELECT status FROM leads WHERE id = $1', [leadId])).rows[0].status;

describe('take over, reply, resume', () => {
  it(
    'a lead escalated for a pricing question: the operator answers, Resume AI → ' +
      'the agent continues qualifying, knowing what the person wrote',
    async () => {
      const phone = uniquePhone();
      const { leadId, phone: e164 } = await h.submit(ws.apiKey, { phone });
      await h.settle();
      assert.equal(await status(leadId), 'in_conversation');
      await h.leadSays('twilio', ws.slug, e164, 'Before anything else I want to talk to a person about the price.');
      await h.settle();
      assert.equal(await status(leadId), 'needs_human');

      const answer = 'Hi, Sam here: a system like yours starts at 8,000 EUR installed. Mia will take it from here.';
      const replied = await admin(h.app.http, session, 'POST', `${leadUrl(leadId)}/reply`, { text: answer });
      assert.deepEqual([replied.status, replied.body], [200, { ok: true, status: 'needs_human' }]);
      await h.settle();
      const sent = (await outbound(leadId)).at(-1);
      assert.deepEqual([sent.body, sent.kind, sent.turn_kind], [answer, 'text', 'operator']);
      assert.ok(['sent', 'delivered', 'read'].includes(sent.status), sent.status);
      assert.equal(await status(leadId), 'needs_human');
      const page = await admin(h.app.http, session, 'GET', leadUrl(leadId));
      const replyEvent = page.body.timeline.find((e: { type: string }) => e.type === 'operator.replied');
      assert.equal(replyEvent.data.operator, OPERATOR);
      assert.ok(
        page.body.timeline.some(
          (e: { type: string; data: { actor?: string } }) => e.type === 'message.sent' && e.data.actor === 'operator',
        ),
      );
      assert.equal(page.body.whatsappWindow.open, true);

      // While the lead is with a person, what the lead writes is not answered by the agent.
      await h.leadSays('twilio', ws.slug, e164, 'Thanks, that works for me. Yes, I own the house.');
      const before = (await outbound(leadId)).length;
      await h.settle();
      assert.equal((await outbound(leadId)).length, before);

      const chatRequestsBefore = h.chat.requests.length;
      const resumed = await admin(h.app.http, session, 'POST', `${leadUrl(leadId)}/resume`);
      assert.deepEqual(resumed.body, { ok: true, status: 'in_conversation' });
      await h.settle();
      assert.equal(await status(leadId), 'in_conversation', 'the agent did not hand the lead over again');
      const next = (await outbound(leadId)).at(-1);
      assert.equal(next.turn_kind, 'reply');
      assert.notEqual(next.body, answer);
      const request = h.chat.requests[chatRequestsBefore]!.body as {
        messages: Array<{ role: string; content: string }>;
      };
      const note = request.messages.find((m) => m.role === 'system' && m.content.startsWith(OPERATOR_NOTE));
      assert.ok(note?.content.includes(answer), 'the model is told a person handled it, and what they wrote');
      const events = (await admin(h.app.http, session, 'GET', leadUrl(leadId))).body.timeline.map(
        (e: { type: string }) => e.type,
      );
      assert.ok(events.includes('operator.resumed'));
      assert.equal(
        events.filter((t: string) => t === 'conversation.escalated' || t === 'lead.escalated').length <= 1,
        true,
      );
    },
  );

  it('take over while a turn is queued: the agent sends nothing more', async () => {
    const { leadId, phone } = await h.submit(ws.apiKey, { phone: uniquePhone() });
    await h.settle();
    await h.leadSays('twilio', ws.slug, phone, 'How long does an installation take?');
    const sentBefore = (await outbound(leadId)).length;
    const taken = await admin(h.app.http, session, 'POST', `${leadUrl(leadId)}/take-over`);
    assert.deepEqual(taken.body, { ok: true, status: 'needs_human' });
    await h.settle();
    assert.equal((await outbound(leadId)).length, sentBefore);
    assert.equal(await status(leadId), 'needs_human');
  });

  it('reply is refused (409) unless the lead was taken over', async () => {
    const { leadId } = await h.submit(ws.apiKey, { phone: uniquePhone() });
    await h.settle();
    const r = await admin(h.app.http, session, 'POST', `${leadUrl(leadId)}/reply`, { text: 'hello' });
    assert.deepEqual(
      [r.status, r.body],
      [409, { ok: false, error: "The lead's status does not allow this.", status: 'in_conversation' }],
    );
  });
});

describe('live updates', () => {
  it(
    'SSE: a new lead, its messages, status and plan changes arrive; when the LISTEN ' +
      'connection drops, the stream closes',
    async () => {
      const controller = new AbortController();
      const res = await fetch(`${h.baseUrl}/api/admin/workspaces/${ws.slug}/events`, {
        headers: { cookie: session.cookie },
        signal: controller.signal,
      });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buffered = '';
      /** Reads events until one matches (bounded: 200 events). */
      const until = async (match: (event: string, data: { kind: string; leadIds: string[] | null }) => boolean) => {
        for (let i = 0; i < 200; i++) {
          let end = buffered.indexOf('\n\n');
          while (end === -1) {
            const { value, done } = await reader.read();
            if (done) throw new Error('stream ended');
            buffered += value;
            end = buffered.indexOf('\n\n');
          }
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const event = /^event: (.+)$/m.exec(block)?.[1];
          const data = /^data: (.+)$/m.exec(block)?.[1];
          if (event && data && match(event, JSON.parse(data))) return;
        }
        throw new Error('no such event');
      };
      try {
        await until((e) => e === 'ready');
        const { leadId } = await h.submit(ws.apiKey, { phone: uniquePhone() });
        await until((e, d) => e === 'change' && d.kind === 'lead.created' && d.leadIds?.includes(leadId) === true);
        await h.settle();
        await until((e, d) => e === 'change' && d.kind === 'message' && d.leadIds?.includes(leadId) === true);
        await until((e, d) => e === 'change' && d.kind === 'lead.status' && d.leadIds?.includes(leadId) === true);
        // Follow-ups stopped: only the plan changes (migration 054 announces it).
        const stopped = await admin(h.app.http, session, 'POST', `${leadUrl(leadId)}/contact-plan/stop`, {});
        assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
        await until((e, d) => e === 'change' && d.kind === 'plan' && d.leadIds?.includes(leadId) === true);

        // Changes may go unheard while the LISTEN connection is down: the stream is closed, and the
        // page reconnects (test/api/live-stream-faults.test.ts follows it further).
        h.app.live.simulateConnectionLoss();
        await assert.rejects(
          until(() => false),
          /stream ended/,
        );
      } finally {
        controller.abort();
      }
    },
  );

  it(
    'nothing is notified while no process has a live page open; a ' +
      'subscriber holds a lease, the last one to leave drops it',
    async () => {
      const leases = async () =>
        Number((await h.app.db.pool.query('SELECT count(*) FROM live_listeners WHERE until > now()')).rows[0].count);
      // Whatever earlier tests opened has closed by now (the lease is dropped in the background).
      for (let i = 0; i < 200 && (await leases()) > 0; i++) await new Promise((r) => setImmediate(r));
      assert.equal(await leases(), 0);
      const listener = new pg.Client({ connectionString: h.app.db.url });
      await listener.connect();
      const heard: string[] = [];
      let marker!: () => void;
      let markerHeard = new Promise<void>((resolve) => (marker = resolve));
      listener.on('notification', (n) => {
        const p = JSON.parse(n.payload!);
        if (p.k === 'marker') marker();
        else heard.push(p.k);
      });
      await listener.query('LISTEN leadintake_live');
      // Notifications arrive in commit order: once the marker is heard, anything before it was too.
      const flush = async () => {
        await h.app.db.pool.query(`SELECT pg_notify('leadintake_live', '{"k":"marker"}')`);
        await markerHeard;
        markerHeard = new Promise<void>((resolve) => (marker = resolve));
      };
      try {
        await h.submit(ws.apiKey, { phone: uniquePhone() });
        await flush();
        assert.deepEqual(heard, [], 'no page open: no NOTIFY');

        const unsubscribe = await h.app.live.subscribe(ws.workspaceId, () => {});
        assert.equal(await leases(), 1);
        await h.submit(ws.apiKey, { phone: uniquePhone() });
        await flush();
        assert.deepEqual(heard, ['lead.created']);

        unsubscribe();
        for (let i = 0; i < 200 && (await leases()) > 0; i++) await new Promise((r) => setImmediate(r));
        assert.equal(await leases(), 0);
        heard.length = 0;
        await h.submit(ws.apiKey, { phone: uniquePhone() });
        await flush();
        assert.deepEqual(heard, []);
      } finally {
        await listener.end();
      }
    },
  );

  it('SSE needs a session and a membership', async () => {
    assert.equal((await fetch(`${h.baseUrl}/api/admin/workspaces/${ws.slug}/events`)).status, 401);
    const other = await h.workspace('twilio');
    const r = await fetch(`${h.baseUrl}/api/admin/workspaces/${other.slug}/events`, {
      headers: { cookie: session.cookie },
    });
    assert.equal(r.status, 404);
  });
});
