// Scripted leads for the WhatsApp simulators (tests and the demo). A persona reads the agent's
// last message and answers like a person would; the wording is what the scripted model
// (src/simulators/chat-model/, the chat-completions simulator) recognises, so the pair runs a whole
// qualification offline and deterministically.

export const LEAD_PERSONAS = ['books', 'not-a-fit', 'wants-human', 'opts-out', 'goes-quiet', 'breaks-model'] as const;
export type LeadPersonaName = (typeof LEAD_PERSONAS)[number];

/** Phrases the scripted model reacts to; personas use them and the model's policy matches them. */
export const PERSONA_PHRASES = {
  /** An answer to a question the persona cannot place (the model stores it as the answer). */
  answer: 'Yes, that works for us — about 20 people, budget approved, we would like to start next month.',
  /** An amount of money asked for (a bill, a budget): above the demo's criteria. */
  amount: 'About 120 EUR a month.',
  /** How many (people, rooms, …). */
  count: 'About 20.',
  /** Picks the first offered slot. */
  pickFirstSlot: 'The first time works for me, please book it.',
  /** Asked for an e-mail address (a lead submitted without one): gives one, so the booking goes ahead. */
  email: 'Sure, it is ada.sandbox@example.com.',
  notAFit: 'Honestly we have no budget for this at all, so it is not a fit for us.',
  wantsHuman: 'Can I talk to a real person, please?',
  optOut: 'STOP',
  /** The scripted model breaks on this: an answer without text or tool call (the sandbox's "model failure" row). */
  breaksModel: 'Hi! Quick question before we start: what does the consultation cover?',
} as const;

/**
 * The lead's reply to the agent's message, or null when the lead stays silent. `agentText` is
 * the text the lead received (a template's rendered body or a free-form message).
 */
export function personaReply(persona: LeadPersonaName, agentText: string): string | null {
  // After the agent's goodbye every persona stays silent, so a simulated chat ends by itself.
  if (saysGoodbye(agentText)) return null;
  switch (persona) {
    case 'goes-quiet':
      return null;
    case 'breaks-model':
      // Answers the first message; the holding message that follows needs no answer.
      return /colleague/i.test(agentText) ? null : PERSONA_PHRASES.breaksModel;
    case 'opts-out':
      return PERSONA_PHRASES.optOut;
    case 'wants-human':
      return PERSONA_PHRASES.wantsHuman;
    case 'not-a-fit':
      return PERSONA_PHRASES.notAFit;
    case 'books':
      if (offersSlots(agentText)) return PERSONA_PHRASES.pickFirstSlot;
      // Answering beside the question would have the agent offer times again, and again.
      if (asksForEmail(agentText)) return PERSONA_PHRASES.email;
      // Confirmation or goodbye: nothing more to say.
      if (/\b(booked|confirmed|see you)\b/i.test(agentText)) return null;
      return answerTo(agentText);
  }
}

/**
 * A qualifying answer to the question asked, as the scripted model asks it (src/simulators/
 * chat-model/scripted-policy.ts, `ask`): a choice by its option ("Yes" where offered), an amount
 * of money, a count, else the all-purpose answer.
 */
export function answerTo(agentText: string): string {
  const question =
    agentText
      .split('\n')
      .filter((l) => l.includes('?') || /\)\s*$/.test(l))
      .at(-1) ?? agentText;
  const choice = /\((?:one of: )?([^()]+)\)\s*$/.exec(question.trim())?.[1];
  const options = choice
    ? choice
        .split(/, | or /)
        .map((o) => o.trim())
        .filter(Boolean)
    : [];
  if (options.length >= 2) return `${options.find((o) => /^yes\b/i.test(o)) ?? options[0]}.`;
  if (/\b(eur|usd|gbp|bill|budget|cost|spend|price|pay)\b|[€$£]/i.test(question)) return PERSONA_PHRASES.amount;
  if (/\bhow many\b|\bnumber of\b/i.test(question)) return PERSONA_PHRASES.count;
  return PERSONA_PHRASES.answer;
}

/** The scripted model offers slots as a numbered list: "1) Tue 3 Dec, 10:00". */
export function offersSlots(agentText: string): boolean {
  return /(^|\n)\s*1\)\s/.test(agentText);
}

/** The agent asks where the booking confirmation should go ("Which e-mail address …?"). */
export function asksForEmail(agentText: string): boolean {
  return /\be-?mail\b[^?]*\?/i.test(agentText);
}

/**
 * The scripted model closes escalated, unqualified and refused chats with "Goodbye!" (a booking ends with "See you
 * then!").
 */
export function saysGoodbye(agentText: string): boolean {
  return /\bgoodbye\b/i.test(agentText);
}
