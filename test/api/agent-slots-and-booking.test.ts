// listSlots and bookConsult on a real database against the Cal.com simulator, through the real
// Cal.com client: free times, bookings, a slot taken meanwhile. Cal.com down or half-down, answers
// lost after Cal.com booked, a bad key, racing bookings: agent-booking-failures.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MONDAY_9, setUpAgentBooking, UNAVAILABLE } from '../helpers/agent-booking-setup.ts';
import { findLead } from '../../src/leads/lead-queries.ts';
import { leadResponse } from '../../src/leads/lead-view.ts';
import { EMPTY_EVENT_TYPE_ID, leadEvents, leadRow, SOLAR_AGENT } from '../helpers/agent-harness.ts';

const { setup: env, schedulingWith, bookDirectly, accepted, offeredLead } = setUpAgentBooking();

/** An inbound WhatsApp message of the lead, as the webhook stores it. */
async function leadWrote(leadId: string, text: string): Promise<void> {
  await env.h.db.pool.query(
    `INSERT INTO whatsapp_messages (lead_id, direction, provider, kind,
      body, status) VALUES ($1, 'inbound', 'twilio', 'text', $2, 'received')`,
    [leadId, text],
  );
}

describe('listSlots', () => {
  it('at most 10 free times over the coming days, in the workspace time zone, as Cal.com gave them', async () => {
    const lead = await env.h.lead(env.ws);
    const answer = await env.h.call(env.ws, lead, 'listSlots', {});
    const days = ['Monday, 5', 'Tuesday, 6', 'Wednesday, 7', 'Thursday, 8', 'Friday, 9'];
    assert.equal(
      answer,
      [
        'Free consultation times in the next 7 days (Europe/Berlin):',
        ...days.flatMap((d, i) =>
          ['09:00', '13:00'].map((t) => `- ${d} September 2050 at ${t} (start: 2050-09-0${5 + i}T${t}:00.000+02:00)`),
        ),
        'Offer two or three that suit the lead. To book, call bookConsult with the start exactly as given.',
      ].join('\n'),
    );
    assert.deepEqual(
      env.h.sim.requests.map((r) => r.query),
      [
        {
          start: '2050-09-04T10:00:00.000Z',
          end: '2050-09-11T10:00:00.000Z',
          eventTypeId: '1001',
          timeZone: 'Europe/Berlin',
        },
      ],
    );
    assert.deepEqual(await leadEvents(env.h.db.pool, lead), [], 'listing changes nothing');
  });

  it('daysAhead narrows the window; every slot of a short window is offered', async () => {
    const lead = await env.h.lead(env.ws);
    const answer = await env.h.call(env.ws, lead, 'listSlots', { daysAhead: 1 });
    assert.match(
      answer,
      /^Free consultation times in the next 1 days \(Europe\/Berlin\):\n- Monday, 5 September 2050 at 09:00 /,
    );
    assert.equal(answer.split('\n').filter((l) => l.startsWith('- ')).length, 7, '09:00 to 12:00');
    assert.match(
      await env.h.call(env.ws, lead, 'listSlots', { daysAhead: 31 }),
      /^Invalid arguments for listSlots: daysAhead: Too big/,
    );
  });

  it(
    'no free times, Cal.com down, a bad key, an unknown event ' + 'type, no scheduling: answers the agent can act on',
    async () => {
      const lead = await env.h.lead(env.ws);
      const empty = await env.h.workspace(schedulingWith({ eventTypeId: EMPTY_EVENT_TYPE_ID }));
      assert.equal(
        await env.h.call(empty, await env.h.lead(empty), 'listSlots', {}),
        'No free consultation times in the next 7 days. Call listSlots with a larger ' +
          'daysAhead (at most 30), or call escalateToHuman if nothing suits the lead.',
      );

      env.h.sim.setFailure('down');
      assert.equal(
        await env.h.call(env.ws, lead, 'listSlots', {}),
        'Could not fetch free times: the scheduling service is not answering right now. Try once more in a ' +
          'minute; if it fails again, tell the lead a colleague will follow up and call escalateToHuman.',
      );
      env.h.sim.setFailure('none');

      const badKey = await env.h.workspace(schedulingWith({ apiKey: 'cal_live_wrong_key' }));
      assert.equal(
        await env.h.call(badKey, await env.h.lead(badKey), 'listSlots', {}),
        "Could not fetch free times: the scheduling service refused this workspace's " +
          'settings (unauthorized). This needs a human: tell the lead a colleague will ' +
          'arrange the consultation, then call escalateToHuman.',
      );
      const unknownType = await env.h.workspace(schedulingWith({ eventTypeId: 4242 }));
      assert.match(
        await env.h.call(unknownType, await env.h.lead(unknownType), 'listSlots', {}),
        /refused this workspace's settings \(not_found\)/,
      );

      const unconfigured = await env.h.workspace({ agent: SOLAR_AGENT });
      env.h.sim.requests.length = 0;
      assert.equal(await env.h.call(unconfigured, await env.h.lead(unconfigured), 'listSlots', {}), UNAVAILABLE);
      assert.equal(env.h.sim.requests.length, 0);
    },
  );
});

describe('bookConsult', () => {
  it('books through Cal.com; the lead becomes booked with bookingUid and bookingStart', async () => {
    const lead = await offeredLead(env.ws, { phone: '+49 30 1234567' });
    const answer = await env.h.call(env.ws, lead, 'bookConsult', { start: MONDAY_9, notes: 'Roof faces south.' });
    const [booking] = accepted();
    assert.ok(booking);
    assert.equal(
      answer,
      `Booked for Monday, 5 September 2050 at 09:00 (Europe/Berlin), booking reference ${booking.uid}. ` +
        'The confirmation goes to ada@example.com. Confirm the time with the lead, then wrap up.',
    );
    assert.deepEqual(booking.attendee, {
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      timeZone: 'Europe/Berlin',
      phoneNumber: '+49301234567',
    });
    assert.deepEqual(booking.metadata, { leadId: lead, notes: 'Roof faces south.' });

    const view = leadResponse((await findLead(env.h.db.pool, lead, env.ws.id, true, false))!, 'whatsapp').lead;
    assert.deepEqual(
      [view.status, view.bookingUid, view.bookingStart],
      ['booked', booking.uid, '2050-09-05T07:00:00.000Z'],
    );
    assert.deepEqual(await leadEvents(env.h.db.pool, lead), [
      {
        type: 'booking.created',
        data: {
          bookingUid: booking.uid,
          bookingStart: '2050-09-05T07:00:00.000Z',
          attendee: { name: 'Ada Lovelace', email: 'ada@example.com' },
          from: 'in_conversation',
          to: 'booked',
          actor: 'agent',
        },
      },
    ]);
    assert.match(
      await env.h.call(env.ws, lead, 'bookConsult', { start: '2050-09-05T10:00:00.000+02:00' }),
      /^Nothing changed: the lead is already booked/,
    );
    assert.equal(accepted().length, 1);
  });

  it(
    'asks for a missing e-mail before calling Cal.com; name, e-mail ' +
      'and phone the lead gave override the stored ones',
    async () => {
      const lead = await offeredLead(env.ws, { email: null, phone: '030 1234567' });
      assert.equal(
        await env.h.call(env.ws, lead, 'bookConsult', { start: MONDAY_9 }),
        'Nothing was booked yet: an e-mail address is needed (the booking confirmation goes ' +
          'there). Ask the lead for it, then call bookConsult again with email.',
      );
      assert.equal(env.h.sim.requests.length, 0);
      await leadWrote(lead, 'It is ada@work.example, and the booking should say Ada King.');
      assert.match(
        await env.h.call(env.ws, lead, 'bookConsult', { start: MONDAY_9, email: 'ada@work.example', name: 'Ada King' }),
        /^Booked for Monday/,
      );
      // A national-format number stored before numbers were E.164 ("+0301234567") is left out rather than refused by
      // Cal.com.
      assert.deepEqual(accepted()[0]!.attendee, {
        name: 'Ada King',
        email: 'ada@work.example',
        timeZone: 'Europe/Berlin',
      });
      assert.equal(
        (await leadRow(env.h.db.pool, lead)).email,
        'ada@work.example',
        "the address the lead gave is now the lead's",
      );

      const other = await offeredLead(env.ws, { email: null });
      await leadWrote(other, 'b@example.com please, or call +44 20 7946 0958');
      await env.h.call(env.ws, other, 'bookConsult', {
        start: '2050-09-05T09:30:00+02:00',
        email: 'b@example.com',
        phone: '+44 20 7946 0958',
      });
      assert.equal(accepted().find((b) => b.metadata.leadId === other)?.attendee.phoneNumber, '+442079460958');
    },
  );

  it('a start in the past is refused before Cal.com is asked', async () => {
    const lead = await offeredLead(env.ws);
    assert.equal(
      await env.h.call(env.ws, lead, 'bookConsult', { start: '2050-09-04T09:00:00Z' }),
      'That time is in the past; nothing was booked. Call listSlots for the current free times.',
    );
    assert.equal(env.h.sim.requests.length, 0);
  });

  it('a slot taken meanwhile is answered with fresh times; the lead is unchanged', async () => {
    const lead = await offeredLead(env.ws);
    await bookDirectly(MONDAY_9);
    const answer = await env.h.call(env.ws, lead, 'bookConsult', { start: MONDAY_9 });
    assert.match(
      answer,
      new RegExp(
        /^That time was taken by someone else in the meantime; nothing was booked\.\n/.source +
          /Free consultation times in the next 7 days \(Europe\/Berlin\):\n/.source +
          /- Monday, 5 September 2050 at 09:30 \(start: 2050-09-05T09:30:00\.000\+02:00\)\n/.source,
      ),
    );
    assert.ok(!answer.includes(`start: ${MONDAY_9}`));
    assert.equal((await leadRow(env.h.db.pool, lead)).status, 'in_conversation');
    assert.deepEqual(await leadEvents(env.h.db.pool, lead), []);
  });

  // The same check as in agent-booking-failures.test.ts, over this file's bookings: the e-mail
  // address and phone number the lead gave in the conversation.
  it('no e-mail address, phone number or key reaches the logs', () => {
    const all = env.h.logs.join('\n');
    for (const secret of ['ada@example.com', 'ada@work.example', '+49301234567', '030 1234567', env.h.sim.apiKey]) {
      assert.ok(!all.includes(secret), `${secret} logged`);
    }
  });
});
