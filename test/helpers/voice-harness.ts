import assert from 'node:assert/strict';
import { freePort } from '../../src/db/embedded.ts';
import type { VapiPersona } from '../../src/simulators/personas/vapi-personas.ts';
import {
  DEFAULT_EVENT_TYPE,
  startCalcomSimulator,
  type CalcomSimulator,
} from '../../src/simulators/calcom/calcom-simulator.ts';
import { serverSecretOf } from '../../src/voice/vapi/vapi-server-settings.ts';
import {
  SIM_API_KEY,
  SIM_ASSISTANT_ID,
  SIM_PHONE_NUMBER_ID,
  startVapiSimulator,
  type VapiSimulator,
  type VapiSimulatorOptions,
} from '../../src/simulators/vapi/vapi-simulator.ts';
import type { VapiSettings, WorkspaceConfig } from '../../src/workspaces/workspace-config.ts';
import { AGENT_TEST_NOW, SOLAR_AGENT } from './agent-harness.ts';
import { startTestApp, TestClock, type TestApp } from './test-app.ts';

// The real app listening on 127.0.0.1 (Vapi's simulator calls it over HTTP, as Vapi would), with
// the Vapi and Cal.com simulators on one test clock set in 2050, so every offered slot is free
// and in the future.

export interface VoiceHarness {
  app: TestApp;
  vapi: VapiSimulator;
  cal: CalcomSimulator;
  clock: TestClock;
  baseUrl: string;
  close(): Promise<void>;
}

export const VAPI: VapiSettings = {
  provider: 'vapi',
  apiKey: SIM_API_KEY,
  assistantId: SIM_ASSISTANT_ID,
  phoneNumberId: SIM_PHONE_NUMBER_ID,
};

export async function startVoiceHarness(
  opts: { vapi?: VapiSimulatorOptions; env?: Record<string, string> } = {},
): Promise<VoiceHarness> {
  const clock = new TestClock(AGENT_TEST_NOW);
  const cal = await startCalcomSimulator({ now: clock.read });
  const vapi = await startVapiSimulator({ now: clock.read, ...opts.vapi });
  // PUBLIC_BASE_URL must name the port before the app is built: dispatch puts it in each call.
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const app = await startTestApp({
    clock,
    env: {
      VAPI_BASE_URL: vapi.url,
      CALCOM_BASE_URL: cal.url,
      PUBLIC_BASE_URL: baseUrl,
      PORT: String(port),
      ...opts.env,
    },
  });
  await app.http.listen({ port, host: '127.0.0.1' });
  return {
    app,
    vapi,
    cal,
    clock,
    baseUrl,
    async close() {
      await vapi.close();
      await app.close();
      await cal.close();
    },
  };
}

export interface VoiceWorkspace {
  workspaceId: string;
  apiKey: string;
  slug: string;
  /** The X-Vapi-Secret Vapi is given for this workspace. */
  secret: string;
}

/** A voice workspace with the solar agent and Cal.com booking; `voice` fields override. */
export async function voiceWorkspace(
  h: VoiceHarness,
  voice: Partial<VapiSettings> = {},
  extra: Partial<WorkspaceConfig> = {},
): Promise<VoiceWorkspace> {
  const settings = { ...VAPI, ...voice };
  const ws = await h.app.createWorkspace('voice', {
    voice: settings,
    scheduling: { provider: 'calcom', apiKey: h.cal.apiKey, eventTypeId: DEFAULT_EVENT_TYPE.id },
    agent: SOLAR_AGENT,
    ...extra,
  } as WorkspaceConfig);
  return { ...ws, secret: serverSecretOf(ws.workspaceId, settings) };
}

/** POSTs a server message as Vapi would (through the app's router, without a socket). */
export async function deliver(
  h: VoiceHarness,
  slug: string,
  body: unknown,
  headers: Record<string, string>,
  endpoint: 'events' | 'tools' = 'events',
): Promise<{ status: number; body: any }> {
  const res = await h.app.http.inject({
    method: 'POST',
    url: `/api/vapi/${slug}/${endpoint}`,
    headers: { 'content-type': 'application/json', ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
  let parsed: unknown = res.body;
  try {
    parsed = JSON.parse(res.body);
  } catch {
    /* keep text */
  }
  return { status: res.statusCode, body: parsed };
}

/** The session of a call, as stored. */
export async function session(h: VoiceHarness, providerCallId: string): Promise<Record<string, any> | undefined> {
  const { rows } = await h.app.db.pool.query(
    `SELECT status, started_at, ended_at, duration_seconds, summary, transcript,
      recording_url, ended_reason FROM call_sessions WHERE provider_call_id = $1`,
    [providerCallId],
  );
  return rows[0];
}

export async function leadOf(h: VoiceHarness, leadId: string): Promise<Record<string, any>> {
  const { rows } = await h.app.db.pool.query(
    'SELECT status, qualification_notes, booking_uid, booking_start FROM leads WHERE id = $1',
    [leadId],
  );
  return rows[0];
}

export async function eventTypes(h: VoiceHarness, leadId: string): Promise<string[]> {
  const { rows } = await h.app.db.pool.query('SELECT type FROM lead_events WHERE lead_id = $1 ORDER BY id', [leadId]);
  return rows.map((r) => r.type);
}

/** The lead's calls as Vapi received them, oldest first. */
export function callsOf(h: VoiceHarness, leadId: string) {
  return h.vapi.calls.filter((c) => (c.call.assistantOverrides as any)?.metadata?.leadId === leadId).map((c) => c.call);
}

/** Plays the lead's latest call as `persona`; every message must be answered 200. */
export async function playLatestCall(h: VoiceHarness, leadId: string, persona: VapiPersona): Promise<void> {
  const played = await h.vapi.play(callsOf(h, leadId).at(-1)!.id, persona);
  assert.ok(played.deliveries.every((d) => d.status === 200));
}
