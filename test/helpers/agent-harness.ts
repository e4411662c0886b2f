import crypto from 'node:crypto';
import type { AgentConfigInput } from '../../src/workspaces/agent-config.ts';
import type { LeadStatus } from '../../src/leads/lead-state.ts';
import { runTool, type ToolContext } from '../../src/agent/tool-registry.ts';
import type { Queryable } from '../../src/db/pool.ts';
import { normalizePhone } from '../../src/leads/phone.ts';
import { CalcomClient } from '../../src/scheduling/calcom/calcom-client.ts';
import {
  DEFAULT_EVENT_TYPE,
  startCalcomSimulator,
  type CalcomSimulator,
} from '../../src/simulators/calcom/calcom-simulator.ts';
import { createLogger, type Logger } from '../../src/shared/logger.ts';
import { workspaceConfigSchema } from '../../src/workspaces/workspace-config.ts';
import type { Channel, WorkspaceRow } from '../../src/workspaces/workspace-queries.ts';
import { parseEncryptionKey, SecretBox } from '../../src/workspaces/secret-box.ts';
import { WorkspaceService } from '../../src/workspaces/workspace-service.ts';
import { TEST_ENCRYPTION_KEY, TestClock } from './test-app.ts';
import { createTestDatabase, type TestDatabase } from './test-db.ts';

// The agent's tools on a real database, against the Cal.com simulator through the real client.
// No HTTP app and no queue: the tools are plain functions.

/** 10:00 UTC on Sunday 4 September 2050: the next free slot is Monday 09:00 in Berlin. */
export const AGENT_TEST_NOW = Date.parse('2050-09-04T10:00:00.000Z');
/** An event type of the simulator without any availability. */
export const EMPTY_EVENT_TYPE_ID = 1002;

export const SOLAR_AGENT: AgentConfigInput = {
  persona: {
    agentName: 'Mia',
    company: 'Sunny Roofs',
    offer: 'rooftop solar systems, installed and financed',
    tone: 'warm, plain-spoken, no jargon',
  },
  criteria:
    'Owns the house (not a tenant), pays at least 80 EUR a month for electricity, ' +
    'and wants the installation within 12 months.',
  timeZone: 'Europe/Berlin',
  questions: [
    { id: 'q_owner', label: 'Do you own the property?', type: 'choice', options: ['Yes', 'No'], required: true },
    { id: 'q_bill', label: 'Monthly electricity bill (EUR)', type: 'number', required: true },
    { id: 'q_when', label: 'When would you like it installed?', type: 'text', required: false },
  ],
};

export interface LeadFixture {
  name?: string;
  phone?: string;
  email?: string | null;
  goal?: string | null;
  status?: LeadStatus;
  metadata?: Record<string, unknown>;
  formResponses?: Record<string, string>;
  answers?: Record<string, string>;
}

export interface AgentHarness {
  db: TestDatabase;
  clock: TestClock;
  sim: CalcomSimulator;
  scheduling: CalcomClient;
  workspaces: WorkspaceService;
  log: Logger;
  logs: string[];
  /** A workspace with the solar agent and working Cal.com settings, unless `config` says otherwise. */
  workspace(config?: Record<string, unknown>, channel?: Channel): Promise<WorkspaceRow>;
  lead(workspace: WorkspaceRow, fixture?: LeadFixture): Promise<string>;
  ctx(workspace: WorkspaceRow, leadId: string): ToolContext;
  call(workspace: WorkspaceRow, leadId: string, tool: string, args?: unknown): Promise<string>;
  close(): Promise<void>;
}

let counter = 0;

export async function startAgentHarness(): Promise<AgentHarness> {
  const db = await createTestDatabase();
  const clock = new TestClock(AGENT_TEST_NOW);
  const sim = await startCalcomSimulator({
    now: clock.read,
    eventTypes: [
      DEFAULT_EVENT_TYPE,
      { ...DEFAULT_EVENT_TYPE, id: EMPTY_EVENT_TYPE_ID, slug: 'never', availability: [] },
    ],
  });
  // Retries without waiting: the tests count requests, not milliseconds.
  const scheduling = new CalcomClient({ baseUrl: sim.url, sleep: async () => {} });
  const workspaces = new WorkspaceService(db.pool, new SecretBox(parseEncryptionKey(TEST_ENCRYPTION_KEY)), 1000);
  const logs: string[] = [];
  const log = createLogger('info', { write: (line: string) => void logs.push(line) });

  const harness: AgentHarness = {
    db,
    clock,
    sim,
    scheduling,
    workspaces,
    log,
    logs,
    async workspace(config, channel = 'whatsapp') {
      const parsed = workspaceConfigSchema.parse(
        config ?? {
          agent: SOLAR_AGENT,
          scheduling: { provider: 'calcom', apiKey: sim.apiKey, eventTypeId: DEFAULT_EVENT_TYPE.id },
        },
      );
      const slug = `agent-${process.pid}-${++counter}`;
      const created = await workspaces.create({ slug, name: `Workspace ${slug}`, channel, config: parsed });
      if (created.kind !== 'created') throw new Error('slug taken');
      return created.workspace;
    },
    lead: (workspace, fixture = {}) => insertLead(db.pool, workspace.id, fixture),
    ctx(workspace, leadId) {
      return {
        pool: db.pool,
        leadId,
        workspace,
        settings: workspaces.settingsOf(workspace),
        scheduling,
        clock: clock.read,
        log,
      };
    },
    call(workspace, leadId, tool, args = {}) {
      return runTool(harness.ctx(workspace, leadId), tool, args);
    },
    async close() {
      await sim.close();
      await db.drop();
    },
  };
  return harness;
}

/** A lead row as the public API would have stored it, in any status. */
export async function insertLead(db: Queryable, workspaceId: string, f: LeadFixture = {}): Promise<string> {
  const phone = f.phone ?? `+49 30 ${crypto.randomInt(1_000_000, 9_999_999)}`;
  // A number that is no possible one is stored as leads from before migration 007 kept it.
  const normalized = normalizePhone(phone) ?? `+${phone.replace(/\D/g, '')}`;
  const { rows } = await db.query(
    `INSERT INTO leads (workspace_id, name, phone, phone_normalized,
      email, goal, consented_at, metadata, form_responses, answers, status)
     VALUES ($1, $2, $3, $4, $5, $6, now(), $7, $8, $9, $10) RETURNING id`,
    [
      workspaceId,
      f.name ?? 'Ada Lovelace',
      phone,
      normalized,
      f.email === undefined ? 'ada@example.com' : f.email,
      f.goal ?? null,
      JSON.stringify(f.metadata ?? {}),
      JSON.stringify(f.formResponses ?? {}),
      JSON.stringify(f.answers ?? {}),
      f.status ?? 'in_conversation',
    ],
  );
  return rows[0].id;
}

/** The lead's timeline, oldest first. */
export async function leadEvents(
  db: Queryable,
  leadId: string,
): Promise<Array<{ type: string; data: Record<string, unknown> }>> {
  const { rows } = await db.query('SELECT type, data FROM lead_events WHERE lead_id = $1 ORDER BY id', [leadId]);
  return rows;
}

export async function leadRow(db: Queryable, leadId: string): Promise<Record<string, any>> {
  const { rows } = await db.query('SELECT * FROM leads WHERE id = $1', [leadId]);
  return rows[0];
}
