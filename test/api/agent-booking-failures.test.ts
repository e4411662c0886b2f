// bookConsult when Cal.com fails or races, on a real database against the Cal.com simulator,
// through the real Cal.com client: Cal.com down or half-down, answers lost after Cal.com booked, a
// bad key, scheduling not configured, racing bookings. listSlots and plain bookings:
// agent-slots-and-booking.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MONDAY_9, setUpAgentBooking, UNAVAILABLE } from '../helpers/agent-booking-setup.ts';
import { transitionLead } from '../../src/leads/lead-state.ts';
import { runTool } from '../../src/agent/tool-registry.ts';
import type { SchedulingProvider } from '../../src/scheduling/scheduling-provider.ts';
import { leadEvents, leadRow, SOLAR_AGENT } from '../helpers/agent-harness.ts';
import { CalcomClient } from '../../src/scheduling/calcom/calcom-client.ts';
import { startCalcomSimulator } from '../../src/simulators/calcom/calcom-simulator.ts';

const { setup: env, schedulingWith, bookDirectly, accepted, offeredLead } = setUpAgentBooking();

describe('bookConsult when Cal.com fails or races', () => {
  it('Cal.com briefly down: nothing was booked (checked), the failure is on the timeline, a retry books', async () => {
    const lead = await offeredLead(env.ws);
    env.h.sim.setFailure('down', { times: 3 });
    const answer = await env.h.call(env.ws, lead, 'bookConsult', { start: MONDAY_9 });
    assert.equal(
      answer,
      'Could not book: the scheduling service is not answering right now. Nothing ' +
        'was booked. Try once more in a minute; if it fails again, tell the lead a ' +
        'colleague will follow up and call escalateToHuman.',
    );
    // The POST that may have booked is not repeated: the lookup (third try) shows no booking of this lead.
    assert.deepEqual(
      env.h.sim.requests.map((r) => r.method),
      ['POST', 'GET', 'GET', 'GET'],
    );
    assert.equal((await leadRow(env.h.db.pool, lead)).status, 'in_conversation');
    assert.deepEqual(await leadEvents(env.h.db.pool, lead), [
      {
        type: 'booking.failed',
        data: {
          start: '2050-09-05T07:00:00.000Z',
          kind: 'unavailable',
          httpStatus: 503,
          message: 'Cal.com answered 503: Service Unavailable',
          actor: 'agent',
        },
      },
    ]);
    assert.match(await env.h.call(env.ws, lead, 'bookConsult', { start: MONDAY_9 }), /^Booked for Monday/);
  });

  it('Cal.com down for good: the booking may exist and cannot be checked, so the lead goes to a human', async () => {
    const lead = await offeredLead(env.ws);
    env.h.sim.setFailure('down');
    const answer = await env.h.call(env.ws, lead, 'bookConsult', { start: MONDAY_9 });
    assert.match(
      answer,
      new RegExp(
        /^It is not certain whether Monday, 5 September 2050 at 09:00 was booked: /.source +
          /.* The lead is now with a colleague \(needs_human\)/.source,
      ),
    );
    assert.equal((await leadRow(env.h.db.pool, lead)).status, 'needs_human');
    const [event] = await leadEvents(env.h.db.pool, lead);
    assert.equal(event?.type, 'booking.uncertain');
    assert.deepEqual(
      [event?.data.start, event?.data.to, event?.data.actor],
      ['2050-09-05T07:00:00.000Z', 'needs_human', 'agent'],
    );
  });

  it("a 5xx while the lead's own lost first attempt holds the slot: found by the lookup, booked", async () => {
    const lead = await offeredLead(env.ws);
    const lost = await bookDirectly(MONDAY_9, { leadId: lead });
    env.h.sim.setFailure('down', { times: 1 });
    const answer = await env.h.call(env.ws, lead, 'bookConsult', { start: MONDAY_9 });
    assert.match(
      answer,
      new RegExp(`^Booked for Monday, 5 September 2050 at 09:00 \\(Europe/Berlin\\), booking reference ${lost.uid}\\.`),
    );
    assert.equal((await leadRow(env.h.db.pool, lead)).booking_uid, lost.uid);
    const [event] = await leadEvents(env.h.db.pool, lead);
    assert.deepEqual([event?.type, event?.data.foundAfterProviderError], ['booking.created', true]);
    assert.equal(accepted().length, 1);
  });

  it('a plain "slot taken" held by the lead\'s own earlier, unrecorded booking: booked', async () => {
    const lead = await offeredLead(env.ws);
    const earlier = await bookDirectly(MONDAY_9, { leadId: lead });
    assert.match(
      await env.h.call(env.ws, lead, 'bookConsult', { start: MONDAY_9 }),
      new RegExp(`booking reference ${earlier.uid}\\.`),
    );
    assert.deepEqual(
      env.h.sim.requests.map((r) => `${r.method} ${r.path}`),
      ['POST /v2/bookings', 'GET /v2/bookings'],
    );
    assert.equal((await leadRow(env.h.db.pool, lead)).booking_uid, earlier.uid);
  });

  it(
    'a plain "slot taken" when the lookup fails: still answered as ' + "taken (the slot is most likely someone else's)",
    async () => {
      const lead = await offeredLead(env.ws);
      await bookDirectly(MONDAY_9);
      const real = env.h.scheduling;
      const scheduling: SchedulingProvider = {
        listSlots: (q) => real.listSlots(q),
        createBooking: (b) => real.createBooking(b),
        getBooking: (key, uid) => real.getBooking(key, uid),
        // Cal.com goes down right after answering "taken", for the lookup's three attempts.
        findBookings: (q) => {
          env.h.sim.setFailure('down', { times: 3 });
          return real.findBookings(q);
        },
        cancelBooking: (key, uid, reason) => real.cancelBooking(key, uid, reason),
        rescheduleBooking: (key, uid, start, reason) => real.rescheduleBooking(key, uid, start, reason),
      };
      assert.match(
        await runTool({ ...env.h.ctx(env.ws, lead), scheduling }, 'bookConsult', { start: MONDAY_9 }),
        /^That time was taken by someone else in the meantime/,
      );
      assert.equal((await leadRow(env.h.db.pool, lead)).status, 'in_conversation');
    },
  );

  it('a 5xx while someone else holds the slot: none of the lead\'s found, not booked; next try "taken"', async () => {
    const lead = await offeredLead(env.ws);
    await bookDirectly(MONDAY_9, { leadId: '00000000-0000-4000-8000-000000000000' });
    env.h.sim.setFailure('down', { times: 1 });
    assert.match(
      await env.h.call(env.ws, lead, 'bookConsult', { start: MONDAY_9 }),
      /^Could not book: the scheduling service is not answering right now\. Nothing was booked\./,
    );
    assert.match(
      await env.h.call(env.ws, lead, 'bookConsult', { start: MONDAY_9 }),
      /^That time was taken by someone else in the meantime/,
    );
    assert.equal((await leadRow(env.h.db.pool, lead)).status, 'in_conversation');
  });

  it('Cal.com booked, its answer lost (502), a second host free: not posted again, first booking kept', async (t) => {
    // A round-robin team of two: the same booking posted again is not "taken" but lands with the other host.
    const team = await startCalcomSimulator({ apiKey: env.h.sim.apiKey, now: env.h.clock.read, hosts: 2 });
    t.after(() => team.close());
    const scheduling = new CalcomClient({ baseUrl: team.url, sleep: async () => {} });
    const lead = await offeredLead(env.ws);
    team.setFailure('lost-answer', { times: 1 });
    const answer = await runTool({ ...env.h.ctx(env.ws, lead), scheduling }, 'bookConsult', { start: MONDAY_9 });
    const [first, ...more] = [...team.bookings.values()];
    assert.deepEqual(more, [], 'booked once');
    assert.equal(first?.metadata.leadId, lead);
    assert.match(answer, new RegExp(`booking reference ${first.uid}\\.`));
    assert.equal((await leadRow(env.h.db.pool, lead)).booking_uid, first.uid);
    // The lost answer is followed by the lookup that finds the booking, never by a second POST.
    assert.deepEqual(
      team.requests.map((r) => `${r.method} ${r.path}`),
      ['POST /v2/bookings', 'GET /v2/bookings'],
    );
  });

  it('every attempt failed but one had booked: found by the lookup, booked', async () => {
    const lead = await offeredLead(env.ws);
    const lost = await bookDirectly(MONDAY_9, { leadId: lead });
    env.h.sim.setFailure('down', { times: 3 });
    assert.match(
      await env.h.call(env.ws, lead, 'bookConsult', { start: MONDAY_9 }),
      new RegExp(`booking reference ${lost.uid}\\.`),
    );
    assert.equal((await leadRow(env.h.db.pool, lead)).status, 'booked');
  });

  it(
    'a bad key: not retried, recorded, the agent is told to hand ' + 'over; scheduling not configured: unavailable',
    async () => {
      const badKey = await env.h.workspace(schedulingWith({ apiKey: 'cal_live_wrong_key' }));
      const lead = await offeredLead(badKey);
      assert.equal(
        await env.h.call(badKey, lead, 'bookConsult', { start: MONDAY_9 }),
        "Could not book: the scheduling service refused this workspace's settings " +
          '(unauthorized). Nothing was booked. This needs a human: tell the lead a ' +
          'colleague will arrange the consultation, then call escalateToHuman.',
      );
      assert.equal(env.h.sim.requests.length, 1);
      assert.deepEqual(
        (await leadEvents(env.h.db.pool, lead)).map((e) => [e.type, e.data.kind, e.data.httpStatus, e.data.message]),
        [['booking.failed', 'unauthorized', 401, 'Cal.com answered 401 UnauthorizedException: Invalid API Key']],
      );

      const unconfigured = await env.h.workspace({ agent: SOLAR_AGENT });
      const other = await offeredLead(unconfigured);
      assert.equal(await env.h.call(unconfigured, other, 'bookConsult', { start: MONDAY_9 }), UNAVAILABLE);
      assert.equal(env.h.sim.requests.length, 1);
      assert.equal((await leadRow(env.h.db.pool, other)).status, 'in_conversation');
    },
  );

  it('two bookings of one lead racing: the lead keeps exactly one, the surplus one is cancelled', async () => {
    for (let round = 0; round < 3; round++) {
      env.h.sim.bookings.clear();
      const lead = await offeredLead(env.ws);
      const answers = await Promise.all(
        ['09:00', '09:30', '10:00'].map((t) =>
          env.h.call(env.ws, lead, 'bookConsult', { start: `2050-09-05T${t}:00.000+02:00` }),
        ),
      );
      assert.equal(answers.filter((a) => a.startsWith('Booked for')).length, 1, answers.join('\n'));
      for (const a of answers.filter((x) => !x.startsWith('Booked for')))
        assert.match(a, /^Nothing changed: the lead is already booked/);
      const row = await leadRow(env.h.db.pool, lead);
      assert.deepEqual(
        accepted().map((b) => b.uid),
        [row.booking_uid],
        "the only booking left in the calendar is the lead's",
      );
      const types = (await leadEvents(env.h.db.pool, lead)).map((e) => e.type);
      assert.equal(types.filter((t) => t === 'booking.created').length, 1);
      assert.equal(types.filter((t) => t === 'booking.discarded').length, env.h.sim.bookings.size - 1);
    }
  });

  it(
    'an operator takes over while Cal.com is booking: the lead ' + 'stays with the operator, the booking is cancelled',
    async () => {
      const lead = await offeredLead(env.ws);
      // The real client, with the take-over slipped in between Cal.com's answer and our update.
      const real = env.h.scheduling;
      const scheduling: SchedulingProvider = {
        listSlots: (q) => real.listSlots(q),
        createBooking: async (b) => {
          const result = await real.createBooking(b);
          await transitionLead(env.h.db.pool, {
            leadId: lead,
            to: 'needs_human',
            actor: 'operator',
            event: { type: 'operator.took_over' },
          });
          return result;
        },
        getBooking: (key, uid) => real.getBooking(key, uid),
        findBookings: (q) => real.findBookings(q),
        cancelBooking: (key, uid, reason) => real.cancelBooking(key, uid, reason),
        rescheduleBooking: (key, uid, start, reason) => real.rescheduleBooking(key, uid, start, reason),
      };
      const answer = await runTool({ ...env.h.ctx(env.ws, lead), scheduling }, 'bookConsult', { start: MONDAY_9 });
      assert.match(
        answer,
        /^Nothing changed: the lead is already needs_human, .* The booking just made was cancelled again\.$/,
      );
      const [booking] = [...env.h.sim.bookings.values()];
      assert.equal(booking?.status, 'cancelled');
      const row = await leadRow(env.h.db.pool, lead);
      assert.deepEqual([row.status, row.booking_uid], ['needs_human', null]);
      assert.deepEqual(
        (await leadEvents(env.h.db.pool, lead)).map((e) => [e.type, e.data.bookingUid, e.data.cancelled]),
        [
          ['operator.took_over', undefined, undefined],
          ['booking.discarded', booking.uid, true],
        ],
      );
    },
  );

  it('no e-mail address, phone number or key reaches the logs', () => {
    const all = env.h.logs.join('\n');
    for (const secret of [
      'ada@example.com',
      'ada@work.example',
      '+49301234567',
      '030 1234567',
      env.h.sim.apiKey,
      'cal_live_wrong_key',
    ]) {
      assert.ok(!all.includes(secret), `${secret} logged`);
    }
    assert.ok(all.includes('"msg":"booking failed"'), 'failures are logged');
  });
});
