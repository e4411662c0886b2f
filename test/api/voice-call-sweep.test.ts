import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eraseLead } from '../../src/leads/lead-erasure.ts';
import { CallSweep, END_OVERDUE_MS, END_UNKNOWN_MS } from '../../src/voice/call-sweep.ts';
import { VapiClient } from '../../src/voice/vapi/vapi-client.ts';
import { SOLAR_AGENT } from '../helpers/agent-harness.ts';
import { postLead, uniquePhone, validLead } from '../helpers/http.ts';
import {
  deliver,
  leadOf,
  session,
  startVoiceHarness,
  voiceWorkspace,
  type VoiceHarness,
  type VoiceWorkspace,
} from '../helpers/voice-harness.ts';
import type { WorkspaceConfig } from '../../src/workspaces/workspace-config.ts';
import { SIM_API_KEY } from '../../src/simulators/vapi/vapi-simulator.ts';
import { ALWAYS_OPEN } from '../helpers/whatsapp-follow-up-setup.ts';

// The call sweep (src/voice/call-sweep.ts), run by hand on the test clock: a call Vapi holds for
// later is cancelled once its lead may no longer be called, and a call whose end never arrived is
// ended from Vapi's record of it, or handed to a person when Vapi cannot tell.

const MINUTE = 60_000;
let h: VoiceHarness;
let held: VoiceWorkspace; // contacts first in the calling window, shut today
let now: VoiceWorkspace; // calls at once
let sweep: CallSweep;
let heldAgent: Record<string, unknown>;

before(async () => {
  h = await startVoiceHarness();
  const day = (d: number) => new Date(h.clock.now + d * 24 * 60 * MINUTE).toISOString().slice(0, 10);
  // Yesterday, today and tomorrow (UTC) are holidays: the window is shut now wherever the lead lives.
  const window = { ...ALWAYS_OPEN, holidays: [day(-1), day(0), day(1)] };
  heldAgent = { ...SOLAR_AGENT, contactPlan: { firstContact: 'in_window', window } };
  held = await voiceWorkspace(h, {}, { agent: heldAgent } as Partial<WorkspaceConfig>);
  now = await voiceWorkspace(h);
  sweep = new CallSweep({
    pool: h.app.db.pool,
    log: h.app.log,
    clock: h.clock.read,
    calls: new VapiClient({ baseUrl: h.vapi.url, timeoutMs: 5000 }),
    workspaces: h.app.workspaces,
  });
});
after(() => h.close());

async function submit(ws: VoiceWorkspace): Promise<{ leadId: string; callId: string; phone: string }> {
  const phone = uniquePhone();
  const res = await postLead(h.app.http, ws.apiKey, validLead({ phone }));
  assert.equal(res.status, 201, JSON.stringify(res.body));
  // Placed at the test clock's time (the database stamps its own).
  await q('UPDATE call_sessions SET created_at = $2 WHERE provider_call_id = $1', [
    res.body.providerCallId,
    h.clock.read(),
  ]);
  return { leadId: res.body.leadId, callId: res.body.providerCallId, phone };
}

const simCall = (callId: string) => h.vapi.calls.find((c) => c.call.id === callId)!.call;
const deletes = (callId: string) =>
  h.vapi.requests.filter((r) => r.method === 'DELETE' && r.path === `/call/${callId}`);
const q = (sql: string, params: unknown[]) => h.app.db.pool.query(sql, params);
async function events(leadId: string, type: string): Promise<Array<Record<string, any>>> {
  const { rows } = await q('SELECT data FROM lead_events WHERE lead_id = $1 AND type = $2 ORDER BY id', [leadId, type]);
  return rows.map((r) => r.data);
}

describe('a call Vapi holds for later', () => {
  test('is cancelled once the number is on the do-not-contact list; the timeline says why', async () => {
    const lead = await submit(held);
    const callable = await submit(held);
    assert.equal(simCall(lead.callId).status, 'scheduled');
    assert.equal((await session(h, lead.callId))?.status, 'scheduled');
    await sweep.sweep();
    assert.equal(deletes(lead.callId).length, 0, 'still callable: left alone');

    await q(`INSERT INTO suppressed_numbers (workspace_id, phone_e164, source) VALUES ($1, $2, 'api')`, [
      held.workspaceId,
      (await q('SELECT phone_normalized FROM leads WHERE id = $1', [lead.leadId])).rows[0].phone_normalized,
    ]);
    await sweep.sweep();
    assert.equal(deletes(lead.callId).length, 1);
    assert.deepEqual(deletes(lead.callId)[0]!.body, {});
    assert.equal(simCall(lead.callId).endedReason, 'scheduled-call-deleted');
    const s = await session(h, lead.callId);
    assert.equal(s?.status, 'ended');
    assert.equal(s?.ended_reason, 'scheduled-call-deleted');
    const ended = await events(lead.leadId, 'call.ended');
    assert.equal(ended.length, 1);
    assert.equal(ended[0]!.cancelled, 'do_not_contact');
    assert.match(ended[0]!.detail, /cancelled before it rang: the number is on the do-not-contact list/);

    await sweep.sweep();
    assert.equal(deletes(lead.callId).length, 1, 'once');
    assert.equal(deletes(callable.callId).length, 0);
    assert.equal(simCall(callable.callId).status, 'scheduled');
  });

  test('is cancelled when the agent is switched off, or the lead taken over', async () => {
    const off = await voiceWorkspace(h, {}, { agent: heldAgent } as Partial<WorkspaceConfig>);
    const a = await submit(off);
    const b = await submit(held);
    await q('UPDATE workspaces SET agent_enabled = false WHERE id = $1', [off.workspaceId]);
    await q(`UPDATE leads SET status = 'needs_human' WHERE id = $1`, [b.leadId]);
    await sweep.sweep();
    assert.equal((await session(h, a.callId))?.ended_reason, 'scheduled-call-deleted');
    assert.equal((await events(a.leadId, 'call.ended'))[0]!.cancelled, 'agent_off');
    assert.equal((await session(h, b.callId))?.ended_reason, 'scheduled-call-deleted');
    assert.equal((await events(b.leadId, 'call.ended'))[0]!.cancelled, 'needs_human');
  });

  test('Vapi already placing it: left to run, noted once', async () => {
    const lead = await submit(held);
    simCall(lead.callId).status = 'ringing';
    await q(`UPDATE leads SET status = 'booked' WHERE id = $1`, [lead.leadId]);
    await sweep.sweep();
    await sweep.sweep();
    assert.equal(deletes(lead.callId).length, 0);
    assert.equal((await session(h, lead.callId))?.status, 'queued');
    assert.equal((await events(lead.leadId, 'call.not_cancelled')).length, 1);
  });

  test('Vapi failing: nothing recorded, a warning without the number, cancelled at the next sweep', async () => {
    const lead = await submit(held);
    await q(`UPDATE leads SET status = 'unqualified' WHERE id = $1`, [lead.leadId]);
    h.vapi.setFailure('server-error');
    try {
      await sweep.sweep();
    } finally {
      h.vapi.setFailure('none');
    }
    assert.equal((await session(h, lead.callId))?.status, 'scheduled');
    const warned = h.app.logs.filter((l) => l.includes('looking up a call at Vapi failed'));
    assert.ok(warned.length > 0);
    assert.deepEqual(
      warned.filter((l) => l.includes(lead.phone.replace(/\D/g, '').slice(-7))),
      [],
    );
    await sweep.sweep();
    assert.equal((await session(h, lead.callId))?.ended_reason, 'scheduled-call-deleted');
  });

  test('Vapi unreachable for hours: the lead goes to a person, and its held call is cancelled later', async () => {
    const lead = await submit(held);
    h.vapi.setFailure('server-error');
    try {
      h.clock.advance(END_OVERDUE_MS + END_UNKNOWN_MS + MINUTE);
      await sweep.sweep();
    } finally {
      h.vapi.setFailure('none');
    }
    assert.equal((await leadOf(h, lead.leadId)).status, 'needs_human');
    const escalated = await events(lead.leadId, 'conversation.escalated');
    assert.equal(escalated[0]?.reason, 'call_end_unknown');
    assert.match(escalated[0]?.detail, /Vapi could not be asked for hours/);
    await sweep.sweep();
    assert.equal(deletes(lead.callId).length, 1);
    assert.equal((await session(h, lead.callId))?.ended_reason, 'scheduled-call-deleted');
    assert.equal((await events(lead.leadId, 'call.ended'))[0]?.cancelled, 'needs_human');
  });

  test("is cancelled after its lead is erased (only the call's id is kept until then)", async () => {
    const lead = await submit(held);
    assert.deepEqual(await eraseLead(h.app.db.pool, { leadId: lead.leadId, actor: 'operator:test' }), { erased: true });
    const { rows } = await q('SELECT workspace_id FROM voice_calls_to_cancel WHERE provider_call_id = $1', [
      lead.callId,
    ]);
    assert.deepEqual(rows, [{ workspace_id: held.workspaceId }]);
    await sweep.sweep();
    assert.equal(deletes(lead.callId).length, 1);
    assert.equal(simCall(lead.callId).endedReason, 'scheduled-call-deleted');
    assert.equal((await q('SELECT 1 FROM voice_calls_to_cancel', [])).rowCount, 0);
  });
});

describe('a call whose end never arrives', () => {
  /** A call placed now (the test clock), ringing at Vapi; none of its messages reach us. */
  async function placed(): Promise<{ leadId: string; callId: string }> {
    const lead = await submit(now);
    simCall(lead.callId).status = 'ringing';
    return lead;
  }

  test("is ended from Vapi's record after the bound, as a report would be; a late report is a duplicate", async () => {
    const lead = await placed();
    await sweep.sweep();
    h.clock.advance(END_OVERDUE_MS + MINUTE);
    await sweep.sweep();
    assert.equal((await session(h, lead.callId))?.status, 'queued', 'still ringing at Vapi: left');

    const call = simCall(lead.callId);
    Object.assign(call, {
      status: 'ended',
      endedReason: 'customer-did-not-answer',
      endedAt: h.clock.read().toISOString(),
      analysis: { summary: 'Nobody picked up.' },
    });
    await sweep.sweep();
    const s = await session(h, lead.callId);
    assert.equal(s?.status, 'ended');
    assert.equal(s?.ended_reason, 'customer-did-not-answer');
    assert.equal(s?.summary, 'Nobody picked up.');
    assert.equal((await events(lead.leadId, 'call.ended')).length, 1);
    // As with the report: a no-answer is counted and a call again scheduled; the lead stays with the agent.
    assert.equal((await events(lead.leadId, 'contact.attempted'))[0]?.outcome, 'no_answer');
    assert.equal((await leadOf(h, lead.leadId)).status, 'in_conversation');

    const report = { message: { type: 'end-of-call-report', call, endedReason: 'customer-did-not-answer' } };
    const late = await deliver(h, now.slug, report, { 'x-vapi-secret': now.secret });
    assert.deepEqual(late.body, { ok: true, duplicate: true });
    assert.equal((await events(lead.leadId, 'call.ended')).length, 1);
  });

  test('a call Vapi does not know goes to a person after the second bound, once', async () => {
    const lead = await placed();
    // Vapi forgets it (its record deleted): GET /call/{id} answers 404.
    assert.equal(
      (await new VapiClient({ baseUrl: h.vapi.url, timeoutMs: 5000 }).deleteCall(SIM_API_KEY, lead.callId)).ok,
      true,
    );
    h.clock.advance(END_OVERDUE_MS + MINUTE);
    await sweep.sweep();
    assert.equal((await leadOf(h, lead.leadId)).status, 'in_conversation', 'before the second bound: waits');
    h.clock.advance(END_UNKNOWN_MS);
    await sweep.sweep();
    await sweep.sweep();
    assert.equal((await leadOf(h, lead.leadId)).status, 'needs_human');
    const escalated = await events(lead.leadId, 'conversation.escalated');
    assert.equal(escalated.length, 1);
    assert.equal(escalated[0]!.reason, 'call_end_unknown');
    assert.match(escalated[0]!.detail, /Vapi does not know the call/);
  });
});
