// Scripted leads for the Vapi simulator. Each persona plays one kind of call the way Vapi's
// assistant and a real person would: spoken lines for the transcript and the tool calls the
// assistant's model makes, whose answers (from our server) steer the rest of the script. The test
// picks the persona; the outcome on our side must follow from the tool calls alone.

export const VAPI_PERSONAS = [
  'books',
  'not-a-fit',
  'wants-human',
  'opts-out',
  'no-answer',
  'busy',
  'hangs-up',
  'voicemail',
  'no-credits',
] as const;
export type VapiPersona = (typeof VAPI_PERSONAS)[number];

/** What a script can do on a connected call; implemented by the call player. */
export interface Conversation {
  /** The call's `assistantOverrides.variableValues`. */
  readonly vars: Readonly<Record<string, string>>;
  /**
   * The call asked for voicemail detection (`assistantOverrides.voicemailDetection`): what the
   * assistant leaves on a machine (`voicemailMessage`, its variables filled; null: it hangs up).
   * Null when the call did not ask, so the assistant talks to the machine as to a person.
   */
  readonly voicemail: { message: string | null } | null;
  /** A spoken line; it moves the call's clock by the time it takes to say. */
  assistant(text: string): void;
  lead(text: string): void;
  /** Sends a `tool-calls` message and answers with our server's `result` (or its `error`). */
  tool(name: string, args: Record<string, unknown>): Promise<string>;
  /** Silence or thinking time, in simulated seconds. */
  pause(seconds: number): void;
}

export interface CallScript {
  /**
   * `connects`: the lead picks up (ringing → in-progress). `start-error`: Vapi ends the call before
   * dialling, with this reason (reported after the 201, Vapi's API docs). `no-answer`: rings out.
   * `busy`: the line is busy (or the lead declines); it never connects either.
   */
  start: 'connects' | 'no-answer' | 'busy' | { startError: string };
  /** Plays the connected call; returns Vapi's `endedReason`. */
  run?(c: Conversation): Promise<string>;
  summary?(c: Conversation): string;
}

/** The line Vapi's assistant opens with (the assistant's firstMessage with the variables filled). */
const greeting = (c: Conversation) =>
  `Hi ${c.vars.leadFirstName || 'there'}, this is Mia calling about the consultation you asked for. ` +
  'Do you have two minutes?';

/** The first `(start: …)` listSlots offered, and the words before it. */
function firstSlot(listed: string): { start: string; spoken: string } | null {
  const m = /^- (.+?) \(start: ([^)]+)\)$/m.exec(listed);
  return m ? { spoken: m[1]!, start: m[2]! } : null;
}

async function qualify(c: Conversation): Promise<void> {
  c.assistant(greeting(c));
  c.lead('Yes, sure, go ahead.');
  c.assistant('Great. Tell me a little about what you need and how soon you would like to start.');
  c.lead('We are a team of about twenty, the budget is approved and we would like to start next month.');
  await c.tool('updateLeadProfile', { notes: 'Team of about 20, budget approved, wants to start next month.' });
}

const SCRIPTS: Record<VapiPersona, CallScript> = {
  books: {
    start: 'connects',
    async run(c) {
      await qualify(c);
      const slots = await c.tool('listSlots', { daysAhead: 7 });
      const slot = firstSlot(slots);
      if (!slot) {
        c.assistant('I cannot see any free times right now. A colleague will call you back to find one. Goodbye!');
        await c.tool('endConversation', {});
        return 'assistant-ended-call';
      }
      c.assistant(`That sounds like a good fit. The first free time is ${slot.spoken}. Does that work for you?`);
      c.lead('The first time works for me, please book it.');
      // Without an address on file the lead says one: bookConsult takes only what the lead gave.
      if (!c.vars.leadEmail) {
        c.assistant('Which e-mail address should the confirmation go to?');
        c.lead('It is lead.persona@example.com.');
      }
      const email = c.vars.leadEmail ? {} : { email: 'lead.persona@example.com' };
      const booked = await c.tool('bookConsult', { start: slot.start, ...email });
      c.assistant(
        /booked/i.test(booked)
          ? 'You are booked. The confirmation is on its way by e-mail. Thank you, goodbye!'
          : 'That did not work, a colleague will call you back. Goodbye!',
      );
      c.lead('Thanks, bye!');
      await c.tool('endConversation', {});
      return 'assistant-ended-call';
    },
    summary: (c) => `${c.vars.leadName} qualified and booked the first free consultation time.`,
  },
  'not-a-fit': {
    start: 'connects',
    async run(c) {
      c.assistant(greeting(c));
      c.lead('Yes.');
      c.assistant('Is there a budget set aside for this?');
      c.lead('Honestly we have no budget for this at all, so it is not a fit for us.');
      await c.tool('markUnqualified', { reason: 'No budget for this at all.' });
      c.assistant('Thank you for being so clear. I will not take more of your time. Goodbye!');
      await c.tool('endConversation', {});
      return 'assistant-ended-call';
    },
    summary: (c) => `${c.vars.leadName} has no budget and is not a fit.`,
  },
  'wants-human': {
    start: 'connects',
    async run(c) {
      c.assistant(greeting(c));
      c.lead('Can I talk to a real person, please?');
      await c.tool('escalateToHuman', { reason: 'The lead asked to talk to a person.' });
      c.assistant('Of course. A colleague will call you back very soon. Goodbye!');
      await c.tool('endConversation', {});
      return 'assistant-ended-call';
    },
    summary: (c) => `${c.vars.leadName} asked to speak to a person.`,
  },
  'opts-out': {
    start: 'connects',
    async run(c) {
      c.assistant(greeting(c));
      c.lead('Stop. Please do not call me again and take me off your list.');
      await c.tool('optOut', { reason: 'The lead asked us to stop calling.' });
      c.assistant('Understood, we will not contact you again. Sorry for the trouble. Goodbye!');
      await c.tool('endConversation', {});
      return 'assistant-ended-call';
    },
    summary: (c) => `${c.vars.leadName} asked not to be called again.`,
  },
  'hangs-up': {
    start: 'connects',
    async run(c) {
      c.assistant(greeting(c));
      c.lead('Sorry, this is not a good time.');
      c.pause(1);
      return 'customer-ended-call';
    },
    summary: (c) => `${c.vars.leadName} hung up right after the greeting.`,
  },
  voicemail: {
    start: 'connects',
    async run(c) {
      if (c.voicemail) {
        // Vapi's detection hears the machine's greeting (transcribed as the customer's side), waits
        // for the beep, then leaves the call's message once or hangs up without one.
        c.lead(
          "Hi, you've reached my voicemail. I can't take your call right now, please leave a message after the tone.",
        );
        c.pause(2);
        if (c.voicemail.message !== null) c.assistant(c.voicemail.message);
        return 'voicemail';
      }
      c.assistant(
        `Hi ${c.vars.leadFirstName || 'there'}, this is Mia about the consultation you asked for. ` +
          'Please call us back. Thank you!',
      );
      return 'voicemail';
    },
    // Only asked for when the assistant spoke: a hang-up on the machine has no summary.
    summary: () => 'The call went to voicemail; a message was left.',
  },
  'no-answer': { start: 'no-answer' },
  busy: { start: 'busy' },
  'no-credits': { start: { startError: 'call.start.error-subscription-insufficient-credits' } },
};

export function callScript(persona: VapiPersona): CallScript {
  return SCRIPTS[persona];
}
