// The setup shared by the WhatsApp turn tests: the WhatsApp harness with a Twilio and a Meta
// workspace, the chat simulator's failures cleared before each test, and readers for what a turn
// left behind. Each test file calls setUpWhatsappTurns() once and gets its own harness and
// database.
import { after, before, beforeEach } from 'node:test';
import { uniquePhone } from './http.ts';
import { startWhatsappHarness, type WhatsappHarness } from './whatsapp-harness.ts';

type Workspace = { slug: string; apiKey: string; workspaceId: string };

/** Registers the file's hooks; the returned fields are set once `before` has run. */
export function setUpWhatsappTurns() {
  const s = {} as {
    h: WhatsappHarness;
    /** The Twilio workspace. */
    tw: Workspace;
    /** The Meta workspace. */
    mt: Workspace;
  };

  before(async () => {
    s.h = await startWhatsappHarness();
    s.tw = await s.h.workspace('twilio');
    s.mt = await s.h.workspace('meta');
  });
  after(() => s.h.close());
  beforeEach(() => s.h.chat.clearFailures());

  async function leadWithTemplate(w = s.tw): Promise<{ leadId: string; phone: string }> {
    const raw = uniquePhone();
    const { leadId } = await s.h.submit(w.apiKey, { phone: raw });
    await s.h.settle();
    return { leadId, phone: `+${raw.replace(/\D/g, '')}` };
  }

  const twilioTo = (phone: string) => s.h.twilio.messages.filter((m) => m.to === phone);
  const lead = async (id: string) => (await s.h.app.db.pool.query('SELECT * FROM leads WHERE id = $1', [id])).rows[0];
  const turns = async (id: string) =>
    (
      await s.h.app.db.pool.query(
        'SELECT kind, state, outcome, model_calls FROM agent_turns WHERE lead_id = $1 ORDER BY id',
        [id],
      )
    ).rows;
  const jobsOf = async (id: string) =>
    (
      await s.h.app.db.pool.query(
        // The lead's turn jobs (its contact plan's contact-attempt jobs name the lead too).
        `SELECT name, state, retry_count FROM pgboss.job
          WHERE data->>'leadId' = $1 AND name = 'agent-turn' ORDER BY created_on`,
        [id],
      )
    ).rows;

  return { setup: s as Readonly<typeof s>, leadWithTemplate, twilioTo, lead, turns, jobsOf };
}
