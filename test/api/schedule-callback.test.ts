// scheduleCallback through both channels: a WhatsApp turn whose model calls the tool (the real
// turn worker, the chat simulator with a scripted policy) and Vapi's tool-calls route. The step
// lands at the right instant inside the calling window with the lead's words on the timeline;
// every refusal answers the model and schedules nothing.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { ChatMessage } from '../../src/agent/chat-model.ts';
import { readPlan } from '../../src/contact-plan/contact-plan-queries.ts';
import { callbackScheduledInCall } from '../../src/agent/tools/schedule-callback.ts';
import type { ValidChatRequest } from '../../src/simulators/chat-model/chat-request-validation.ts';
import { scriptedReply } from '../../src/simulators/chat-model/scripted-policy.ts';
import {
  endOfCallReportMessage,
  statusUpdateMessage,
  toolCallsMessage,
} from '../../src/simulators/vapi/vapi-sim-messages.ts';
import { pendingStep, timeline } from '../helpers/contact-plan-harness.ts';
import { postLead, uniquePhone, validLead } from '../helpers/http.ts';
import { deliver } from '../helpers/voice-harness.ts';
import { voiceWorkspaceSetup } from '../helpers/voice-workspace-setup.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

// Both harnesses' clocks: Sunday 4 September 2050, 12:00 in Berlin (the default window is shut on Sundays).
const BERLIN = { timeZone: 'Europe/Berlin' };
const WORDS = 'Call me tomorrow after six, please';

const toolAnswers = (messages: ChatMessage[]) => messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));
/** A model that calls scheduleCallback with `at` once per lead message, then says it is arranged. */
const callbackModel = (at: string) => (request: ValidChatRequest) =>
  toolAnswers(request.messages.slice(request.messages.findLastIndex((m) => m.role === 'user'))).length === 0
    ? {
        content: null,
        tool_calls: [
          {
            id: `call_${randomBytes(8).toString('hex')}`,
            type: 'function' as const,
            function: { name: 'scheduleCallback', arguments: JSON.stringify({ at, leadWords: WORDS }) },
          },
        ],
      }
    : { content: 'Arranged.' };

describe('WhatsApp: scheduleCallback in a turn', () => {
  let h: WhatsappHarness;
  let tw: { slug: string; apiKey: string; workspaceId: string };
  before(async () => {
    h = await startWhatsappHarness();
    tw = await h.workspace('twilio');
  });
  after(() => h.close());
  beforeEach(() => h.chat.setPolicy(scriptedReply));

  async function turnCalling(at: string, prepare?: (leadId: string, phone: string) => Promise<void>) {
    const raw = uniquePhone();
    const { leadId, phone } = await h.submit(tw.apiKey, { phone: raw, metadata: BERLIN });
    await h.settle();
    await prepare?.(leadId, phone);
    h.chat.setPolicy(callbackModel(at));
    await h.leadSays('twilio', tw.slug, phone, WORDS);
    await h.settle();
    const { rows } = await h.app.db.pool.query(
      'SELECT transcript FROM agent_turns WHERE lead_id = $1 ORDER BY id DESC LIMIT 1',
      [leadId],
    );
    const answer = (rows[0]?.transcript as Array<{ role: string; content: string }> | undefined)?.find(
      (m) => m.role === 'tool',
    )?.content;
    return { leadId, answer };
  }
  const callbacks = async (leadId: string) =>
    (await timeline(h.app, leadId, ['contact.scheduled'])).filter((e) => e.data.kind === 'callback');

  it("'tomorrow after six' is the next attempt at 18:00 Berlin, with the lead's words on the timeline", async () => {
    const { leadId, answer } = await turnCalling('2050-09-05T18:00');
    assert.equal(
      answer,
      'Callback scheduled: we will write to the lead on Monday, 5 September 2050 at ' +
        "18:00 (the lead's time, Europe/Berlin). Tell the lead this time.",
    );
    const step = await pendingStep(h.app, leadId);
    assert.deepEqual([step?.kind, step?.at.toISOString()], ['callback', '2050-09-05T16:00:00.000Z']);
    const [scheduled] = await callbacks(leadId);
    assert.equal(scheduled?.data.leadWords, WORDS);
    assert.equal(scheduled?.data.reason, 'the lead asked');
    assert.ok(!h.app.logs.join('\n').includes(WORDS), "the lead's words are not in the logs");
  });

  it('a time after the window closes is moved to the next opening, and the answer says so', async () => {
    const { leadId, answer } = await turnCalling('2050-09-05T21:30');
    assert.match(
      answer!,
      /^The time the lead asked for, Monday, 5 September 2050 at 21:30, is outside our contact hours/,
    );
    assert.match(answer!, /Tuesday, 6 September 2050 at 09:00/);
    assert.equal((await pendingStep(h.app, leadId))?.at.toISOString(), '2050-09-06T07:00:00.000Z');
  });

  const refusals: Array<[string, string, RegExp, ((leadId: string, phone: string) => Promise<void>)?]> = [
    ['in the past', '2050-09-04T11:00', /^Nothing was scheduled: that time has already passed/],
    ['more than 14 days ahead', '2050-09-19T12:01', /^Nothing was scheduled: a callback can be at most 14 days ahead/],
    ['unreadable', 'tomorrow at six', /^Nothing was scheduled: "at" must be a date and time/],
    [
      'on the do-not-contact list',
      '2050-09-05T18:00',
      /^Nothing was scheduled: this number is on the do-not-contact list/,
      async (_leadId, phone) => {
        await h.app.db.pool.query(
          `INSERT INTO suppressed_numbers (workspace_id, phone_e164, source) VALUES ($1, $2, 'operator')`,
          [tw.workspaceId, phone],
        );
      },
    ],
  ];
  for (const [what, at, expected, prepare] of refusals) {
    it(`a callback ${what} is refused with a reason for the model; nothing is scheduled`, async () => {
      const { leadId, answer } = await turnCalling(at, prepare);
      assert.match(answer!, expected);
      assert.deepEqual(await callbacks(leadId), []);
      assert.equal((await pendingStep(h.app, leadId))?.kind === 'callback', false);
    });
  }

  it('at most three callbacks per lead', async () => {
    const raw = uniquePhone();
    const { leadId, phone } = await h.submit(tw.apiKey, { phone: raw, metadata: BERLIN });
    await h.settle();
    const answers: string[] = [];
    for (const day of ['05', '06', '07', '08']) {
      h.chat.setPolicy(callbackModel(`2050-09-${day}T18:00`));
      await h.leadSays('twilio', tw.slug, phone, WORDS);
      await h.settle();
      const { rows } = await h.app.db.pool.query(
        'SELECT transcript FROM agent_turns WHERE lead_id = $1 ORDER BY id DESC LIMIT 1',
        [leadId],
      );
      answers.push(toolAnswers(rows[0].transcript as ChatMessage[]).at(-1)!);
    }
    assert.deepEqual(
      answers.map((a) => a.startsWith('Callback scheduled')),
      [true, true, true, false],
    );
    assert.match(answers[3]!, /already asked for 3 callbacks/);
    assert.equal((await callbacks(leadId)).length, 3);
    // The fourth message ended the plan (a lead's message always does); the refusal put nothing in its place.
    assert.notEqual((await pendingStep(h.app, leadId))?.kind, 'callback');
  });
});

describe('voice: scheduleCallback over the Vapi tools route', () => {
  const v = voiceWorkspaceSetup();

  async function callOn(at: string, status?: string, prepare?: (leadId: string) => Promise<void>) {
    const res = await postLead(v.h.app.http, v.ws.apiKey, validLead({ metadata: BERLIN }));
    assert.equal(res.status, 201);
    const leadId: string = res.body.leadId;
    const call = v.h.vapi.calls.find((c) => c.call.id === res.body.providerCallId)!.call;
    if (status) await v.h.app.db.pool.query('UPDATE leads SET status = $2 WHERE id = $1', [leadId, status]);
    await prepare?.(leadId);
    const message = toolCallsMessage(
      call,
      v.at(),
      [{ id: `cb_${randomBytes(6).toString('hex')}`, name: 'scheduleCallback', args: { at, leadWords: WORDS } }],
      'string',
    );
    const reply = await deliver(v.h, v.ws.slug, message, v.secret(), 'tools');
    assert.equal(reply.status, 200);
    return { leadId, callId: call.id, answer: reply.body.results[0].result as string };
  }

  it('schedules a call at the asked time, marked as asked during this call', async () => {
    // The call is itself an attempt of the plan, in flight while the lead speaks.
    const inFlight = async (leadId: string) => {
      await v.h.app.db.pool.query(`SELECT contact_plan_schedule($1, 'call', now(), 'no answer', '{}')`, [leadId]);
      await v.h.app.db.pool.query('UPDATE contact_plans SET in_flight_since = now() WHERE lead_id = $1', [leadId]);
    };
    const { leadId, callId, answer } = await callOn('2050-09-05T18:00', undefined, inFlight);
    assert.match(answer, /^Callback scheduled: we will call the lead on Monday, 5 September 2050 at 18:00/);
    const plan = await readPlan(v.h.app.db.pool, leadId);
    assert.equal(plan?.inFlightSince, null, "the call's mark is not the callback's: it runs as a fresh step");
    assert.deepEqual([plan?.next?.kind, plan?.next?.at.toISOString()], ['callback', '2050-09-05T16:00:00.000Z']);
    assert.equal(plan?.next?.data?.leadWords, WORDS);
    assert.equal(callbackScheduledInCall(plan, callId), true);
    assert.equal(callbackScheduledInCall(plan, 'another-call'), false);
  });

  it("the call's answered end leaves the callback standing (an answered call otherwise ends the plan)", async () => {
    const { leadId, callId } = await callOn('2050-09-05T18:00');
    const call = v.h.vapi.calls.find((c) => c.call.id === callId)!.call;
    await deliver(v.h, v.ws.slug, statusUpdateMessage(call, 'in-progress', v.at()), v.secret());
    const report = {
      endedReason: 'customer-ended-call',
      startedAt: new Date(v.at()).toISOString(),
      endedAt: new Date(v.at()).toISOString(),
      messages: [],
      summary: null,
      recordingUrl: null,
      cost: 0,
    };
    const res = await deliver(v.h, v.ws.slug, endOfCallReportMessage(call, v.at(), report as any), v.secret());
    assert.equal(res.status, 200);
    const attempted = await timeline(v.h.app, leadId, ['contact.attempted']);
    assert.equal(attempted.at(-1)?.data.outcome, 'answered');
    const plan = await readPlan(v.h.app.db.pool, leadId);
    assert.deepEqual([plan?.endedAt, plan?.next?.kind], [null, 'callback']);
  });

  it('a booked lead is refused; nothing is scheduled', async () => {
    const { leadId, answer } = await callOn('2050-09-05T18:00', 'booked');
    assert.match(answer, /^Nothing changed: the lead is already booked/);
    assert.equal(await pendingStep(v.h.app, leadId), null);
  });

  it("with the workspace's kill switch on, it is refused; nothing is scheduled", async () => {
    const setAgent = (on: boolean) =>
      v.h.app.db.pool.query('UPDATE workspaces SET agent_enabled = $2 WHERE id = $1', [v.ws.workspaceId, on]);
    const res = await postLead(v.h.app.http, v.ws.apiKey, validLead({ metadata: BERLIN }));
    const call = v.h.vapi.calls.find((c) => c.call.id === res.body.providerCallId)!.call;
    await setAgent(false);
    try {
      const message = toolCallsMessage(
        call,
        v.at(),
        [{ id: 'cb_off', name: 'scheduleCallback', args: { at: '2050-09-05T18:00', leadWords: WORDS } }],
        'string',
      );
      const reply = await deliver(v.h, v.ws.slug, message, v.secret(), 'tools');
      assert.match(reply.body.results[0].result, /^Nothing was scheduled: the team has paused automatic contact/);
      assert.equal(await pendingStep(v.h.app, res.body.leadId), null);
    } finally {
      await setAgent(true);
    }
  });
});
