import fs from 'node:fs';
import path from 'node:path';
import type { Queryable } from '../db/pool.ts';
import type { AgentConfigInput } from '../workspaces/agent-config.ts';
import { defaultFormMode } from '../workspaces/form-settings.ts';
import { contactPlanSchema } from '../workspaces/contact-plan-config.ts';
import type { Channel } from '../workspaces/workspace-queries.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import { SANDBOX_OUTCOME_TABLE, sandboxPhone } from './sandbox-outcomes.ts';

// The demo (docs/SANDBOX.md): two workspaces, one per channel, with an agent config, reached with
// sandbox keys, so a newcomer sees the whole product work without any provider account. `npm
// start` creates them once on an empty embedded database; `leadintake demo` on any database.

export const DEMO_AGENT: AgentConfigInput = {
  persona: {
    agentName: 'Mia',
    company: 'Sunny Roofs (demo)',
    offer: 'rooftop solar systems, installed and financed',
    tone: 'warm, plain-spoken, no jargon',
  },
  criteria: 'Owns the house (not a tenant) and pays at least 80 EUR a month for electricity.',
  timeZone: 'Europe/Berlin',
  questions: [
    { id: 'q_owner', label: 'Do you own the property?', type: 'choice', options: ['Yes', 'No'], required: true },
    { id: 'q_bill', label: 'Monthly electricity bill (EUR)', type: 'number', required: true },
  ],
  // Open around the clock, so the demo shows its follow-ups whenever it runs (docs/FOLLOW-UP.md);
  // a real workspace keeps the default Monday–Saturday 09:00–20:00 in the lead's zone.
  contactPlan: contactPlanSchema.parse({
    window: { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '24:00' },
  }),
};

export const DEMO_SLUGS: Record<Channel, string> = { whatsapp: 'demo-whatsapp', voice: 'demo-voice' };
export const DEMO_KEYS_FILE = 'demo-keys.txt';
/** Generous: the demo submits a lead every few seconds for as long as it runs. */
const DEMO_HOURLY_LIMIT = 100_000;

export interface DemoKey {
  channel: Channel;
  slug: string;
  key: string;
}

/**
 * The two demo workspaces (created when missing) and a new sandbox key for each: keys are shown
 * once and stored hashed, so a second run cannot show the first run's keys again. With `db`, their
 * hosted forms (/forms/demo-whatsapp, /forms/demo-voice) submit sandbox leads, unless an operator
 * chose a mode for them already.
 */
export async function ensureDemoWorkspaces(workspaces: WorkspaceService, db?: Queryable): Promise<DemoKey[]> {
  const keys: DemoKey[] = [];
  for (const channel of ['whatsapp', 'voice'] as const) {
    const slug = DEMO_SLUGS[channel];
    if (!(await workspaces.findBySlug(slug))) {
      const name = channel === 'whatsapp' ? 'Demo (WhatsApp)' : 'Demo (voice)';
      const created = await workspaces.create({ slug, name, channel, config: { agent: DEMO_AGENT } });
      if (created.kind === 'slug_taken' && !(await workspaces.findBySlug(slug)))
        throw new Error(`cannot create the demo workspace ${slug}`);
    }
    const workspace = await workspaces.findBySlug(slug);
    if (db && workspace) await defaultFormMode(db, workspace.id, 'sandbox');
    const key = await workspaces.createKey(slug, { name: 'demo', sandbox: true, hourlyLimit: DEMO_HOURLY_LIMIT });
    if (!key) throw new Error(`the demo workspace ${slug} disappeared`);
    keys.push({ channel, slug, key: key.key });
  }
  return keys;
}

/** One line a person can paste: POST a sandbox lead whose phone ends in `suffix`. */
export function demoCurl(baseUrl: string, key: string, suffix = '0001'): string {
  const body = JSON.stringify({
    name: 'Ada Lovelace',
    phone: sandboxPhone(suffix),
    email: 'ada@example.com',
    consent: true,
  });
  return (
    `curl -s -X POST ${baseUrl}/api/public/leads -H "Authorization: Bearer ${key}" ` +
    `-H "Content-Type: application/json" -d '${body}'`
  );
}

/** An outcome row with nothing special for a channel: what any other number does. */
const BOOKS = 'books, like any other number';

/** What `npm start` prints once (and writes to the data folder): keys, curls, what will happen. */
export function demoBanner(baseUrl: string, keys: DemoKey[], keysFile: string | null, extra: string[] = []): string {
  const wa = keys.find((k) => k.channel === 'whatsapp')!;
  const voice = keys.find((k) => k.channel === 'voice')!;
  const rows = SANDBOX_OUTCOME_TABLE.map(
    (r) => `    …${r.suffix}  WhatsApp: ${r.whatsapp ?? BOOKS}; voice: ${r.voice ?? BOOKS}`,
  );
  return [
    '',
    '=== leadintake demo: two sandbox workspaces, every provider simulated in this process ===',
    '',
    `WhatsApp workspace "${wa.slug}", sandbox key: ${wa.key}`,
    `Voice workspace "${voice.slug}", sandbox key: ${voice.key}`,
    '',
    'Submit a WhatsApp lead (first message within a second, booked within about 10 s):',
    demoCurl(baseUrl, wa.key),
    '',
    'Submit a voice lead (the call rings, talks and ends within about 20 s):',
    demoCurl(baseUrl, voice.key),
    '',
    `Then read it (use the leadId the POST answered): curl -s ${baseUrl}/api/public/leads/<leadId> ` +
      '-H "Authorization: Bearer <key>"',
    '',
    "The phone's last four digits choose what the simulated lead does; anything else books:",
    ...rows,
    '',
    ...extra,
    ...(keysFile ? [`These keys are saved in ${keysFile}. Watch leads flow: npm run demo (docs/SANDBOX.md).`, ''] : []),
  ].join('\n');
}

export function writeDemoKeysFile(dataDir: string, banner: string): string {
  const file = path.join(path.resolve(dataDir), DEMO_KEYS_FILE);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${banner.trim()}\n`, { mode: 0o600 });
  return file;
}

/** The first start's file of demo keys and the demo operator's password, when it exists. */
export function demoKeysFile(dataDir: string, embedded: boolean): string | null {
  const file = path.join(path.resolve(dataDir), DEMO_KEYS_FILE);
  return embedded && fs.existsSync(file) ? file : null;
}

/**
 * What every later `npm start` prints: the dashboard's address and where the first start saved
 * the demo's keys and the demo operator's password (never the secrets themselves: they were
 * shown once, and the file is readable by its owner only).
 */
export function laterStartBanner(baseUrl: string, keysFile: string | null): string {
  return [
    '',
    `leadintake is running. Dashboard: ${baseUrl}/admin`,
    ...(keysFile
      ? [`The demo's sandbox keys and the demo operator's sign-in are in ${keysFile}. Watch leads flow: npm run demo.`]
      : []),
    '',
  ].join('\n');
}

/** True when `npm start` should create the demo: embedded database, no workspace, no keys file yet. */
export async function isFirstEmbeddedStart(
  dataDir: string,
  embedded: boolean,
  workspaces: WorkspaceService,
): Promise<boolean> {
  if (!embedded) return false;
  if (fs.existsSync(path.join(path.resolve(dataDir), DEMO_KEYS_FILE))) return false;
  return (await workspaces.list()).length === 0;
}
