// Submit a lead and wait for what the agent made of it. Run: node examples/outcome.ts
// (LEADINTAKE_URL and LEADINTAKE_API_KEY in the environment).
import { LeadIntakeClient, LeadIntakeError } from '../src/index.ts';

const client = new LeadIntakeClient({
  baseUrl: process.env.LEADINTAKE_URL ?? 'http://127.0.0.1:3000',
  apiKey: process.env.LEADINTAKE_API_KEY ?? '',
});

try {
  const { leadId } = await client.submitLead({ name: 'Ada Lovelace', phone: '+44 20 7946 0958', consent: true });
  const { lead, voiceCall } = await client.waitForOutcome(leadId, { signal: AbortSignal.timeout(30 * 60_000) });
  const status: 'new' | 'in_conversation' | 'booked' | 'unqualified' | 'needs_human' = lead.status;
  const transcript: string | null = voiceCall ? voiceCall.transcript : null;
  console.log(status, lead.bookingStart ?? '-', transcript ?? '(no call)');
} catch (err) {
  if (err instanceof LeadIntakeError) {
    console.error(err.status, err.error, err.issues ?? '', `request ${err.requestId}`);
  }
  else throw err;
}
