import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { FormSettingsService } from '../../src/forms/form-settings-service.ts';
import { DEMO_AGENT } from '../../src/sandbox/demo-workspaces.ts';
import {
  startTurnstileSimulator,
  type TurnstileSimulator,
} from '../../src/simulators/turnstile/turnstile-simulator.ts';
import type { WorkspaceRow } from '../../src/workspaces/workspace-queries.ts';
import { startTestApp, TestClock, type TestApp } from './test-app.ts';

// The hosted form's API tests (test/api/hosted-form*.test.ts): the app on a clock the test moves
// (the minimum fill time), the Turnstile simulator, and helpers to GET the form and POST it as a
// browser without JavaScript would.

export interface FormPage {
  status: number;
  html: string;
  headers: Record<string, unknown>;
  /** The hidden fields the page carries (fill token, consent version, page). */
  hidden: Record<string, string>;
}

export interface HostedFormSetup {
  app: TestApp;
  clock: TestClock;
  turnstile: TurnstileSimulator;
  forms: FormSettingsService;
  get(slug: string, query?: string, headers?: Record<string, string>): Promise<FormPage>;
  /** GETs the form, waits the minimum fill time on the clock, then POSTs the page's hidden fields and `fields`. */
  submit(
    slug: string,
    fields: Record<string, string>,
    opts?: { ip?: string; query?: string; wait?: number },
  ): Promise<FormPage>;
  post(slug: string, fields: Record<string, string>, opts?: { ip?: string; query?: string }): Promise<FormPage>;
  workspace(slug: string): Promise<WorkspaceRow>;
  /** A whatsapp workspace with the demo's questions (owner: choice, bill: number). */
  formWorkspace(channel?: 'whatsapp' | 'voice'): Promise<{ slug: string; workspaceId: string }>;
}

export const QUESTIONS = DEMO_AGENT.questions;

function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) out[m[1]!] = m[2]!;
  return out;
}

export function hostedFormSetup(): HostedFormSetup {
  const s = {} as HostedFormSetup;
  before(async () => {
    s.clock = new TestClock();
    s.turnstile = await startTurnstileSimulator();
    s.app = await startTestApp({ clock: s.clock, env: { TURNSTILE_VERIFY_URL: s.turnstile.verifyUrl } });
    s.forms = new FormSettingsService(s.app.db.pool, s.app.secrets);
  });
  after(async () => {
    await s.app.close();
    await s.turnstile.close();
  });
  const page = (res: { statusCode: number; body: string; headers: Record<string, unknown> }): FormPage => ({
    status: res.statusCode,
    html: res.body,
    headers: res.headers,
    hidden: hiddenFields(res.body),
  });
  s.get = async (slug, query = '', headers = {}) =>
    page(await s.app.http.inject({ method: 'GET', url: `/forms/${slug}${query}`, headers }));
  s.post = async (slug, fields, opts = {}) =>
    page(
      await s.app.http.inject({
        method: 'POST',
        url: `/forms/${slug}${opts.query ?? ''}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'FormTest/1.0' },
        payload: new URLSearchParams(fields).toString(),
        remoteAddress: opts.ip ?? '203.0.113.7',
      }),
    );
  s.submit = async (slug, fields, opts = {}) => {
    const form = await s.get(slug, opts.query ?? '');
    assert.equal(form.status, 200);
    s.clock.advance(opts.wait ?? 5_000);
    return s.post(slug, { ...form.hidden, ...fields }, opts);
  };
  s.workspace = async (slug) => (await s.app.workspaces.findBySlug(slug))!;
  s.formWorkspace = async (channel = 'whatsapp') => {
    const { slug, workspaceId } = await s.app.createWorkspace(channel, { agent: DEMO_AGENT });
    return { slug, workspaceId };
  };
  return s;
}

/** A complete, valid answer to the demo's form. */
export function validFields(phone: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    name: 'Ada Lovelace',
    phone,
    email: 'ada@example.com',
    q_owner: 'Yes',
    q_bill: '120',
    consent: 'yes',
    ...extra,
  };
}
