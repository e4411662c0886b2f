import { z } from 'zod';
import type { Queryable } from '../db/pool.ts';

// The hosted form's settings (docs/INTAKE.md, "The hosted form"), stored in clear in
// `workspaces.form_settings` (migrations/049): none of it is secret except Turnstile's secret key,
// which is kept sealed with the workspace's secret box (src/forms/form-settings-service.ts seals
// it; this module only stores the sealed text). Every field has a default, so `{}` is a working
// form: English, optional e-mail, the goal shown, the default consent wording, live leads.

export const FORM_LANGUAGES = ['en', 'de'] as const;
export type FormLanguage = (typeof FORM_LANGUAGES)[number];

const text = (what: string, max: number) =>
  z
    .string({ error: `${what} must be a string` })
    .trim()
    .min(1, `${what} must not be empty`)
    .max(max, `${what} must be at most ${max} characters`);

/** A display number: digits with an optional +, spaces, dashes and parentheses. */
const displayNumber = (what: string) =>
  z
    .string({ error: `${what} must be a string` })
    .trim()
    .regex(/^\+?[0-9][0-9 ()-]{4,24}$/, `${what} must be a phone number such as +44 20 7946 0958`);

export const formSettingsSchema = z
  .object({
    language: z.enum(FORM_LANGUAGES, { error: "language must be 'en' or 'de'" }).default('en'),
    accentColor: z
      .string()
      .regex(/^#[0-9a-fA-F]{6}$/, 'accentColor must be a colour such as #1f5fbf')
      .transform((c) => c.toLowerCase())
      .default('#1f5fbf'),
    email: z
      .enum(['optional', 'required', 'hidden'], { error: "email must be 'optional', 'required' or 'hidden'" })
      .default('optional'),
    showGoal: z.boolean().default(true),
    /** Unset: the default wording of the form's language (src/forms/form-strings.ts). */
    consentText: text('consentText', 2000).optional(),
    /** Replaces the thank-you page's first paragraph. */
    thankYou: text('thankYou', 1000).optional(),
    /** Voice: the number the lead sees on the thank-you page ("We're calling you now from …"). */
    callerNumber: displayNumber('callerNumber').optional(),
    /** WhatsApp: the number of the wa.me link on the thank-you page (else the Twilio sender's). */
    whatsappNumber: displayNumber('whatsappNumber').optional(),
    /** The public booking page of the same Cal.com event type the agent books. */
    selfBookingUrl: z
      .url({ protocol: /^https$/, error: 'selfBookingUrl must be an https URL' })
      .max(500)
      .optional(),
    /** `sandbox`: the form's leads are sandbox leads (every provider simulated), as the demo's are. */
    mode: z.enum(['live', 'sandbox']).default('live'),
    /** Form submissions a workspace accepts per hour (all addresses together). */
    hourlyLimit: z.number().int().min(1).max(100_000).default(300),
    /** Cloudflare Turnstile: the public site key; the secret is stored sealed beside it. */
    turnstile: z
      .object({
        siteKey: text('turnstile.siteKey', 200),
        /** Sealed with the workspace's secret box, base64; never shown. */
        secretSealed: z.string().min(1).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type FormSettings = z.output<typeof formSettingsSchema>;

/**
 * The stored settings, read leniently: a stored value that no longer passes (a newer version's
 * field, a hand edit) is dropped field by field to its default instead of taking the form down.
 */
export function formSettingsOf(stored: unknown): FormSettings {
  const whole = formSettingsSchema.safeParse(stored ?? {});
  if (whole.success) return whole.data;
  const kept: Record<string, unknown> = {};
  const input = typeof stored === 'object' && stored !== null ? (stored as Record<string, unknown>) : {};
  for (const [k, v] of Object.entries(input)) {
    if (formSettingsSchema.safeParse({ ...kept, [k]: v }).success) kept[k] = v;
  }
  return formSettingsSchema.parse(kept);
}

export async function readFormSettingsColumn(db: Queryable, workspaceId: string): Promise<unknown> {
  const { rows } = await db.query('SELECT form_settings FROM workspaces WHERE id = $1', [workspaceId]);
  return rows[0]?.form_settings ?? {};
}

export async function writeFormSettingsColumn(db: Queryable, workspaceId: string, stored: object): Promise<void> {
  await db.query('UPDATE workspaces SET form_settings = $2 WHERE id = $1', [workspaceId, JSON.stringify(stored)]);
}

/**
 * Sets the form's mode only where none was chosen yet: the demo workspaces' forms submit sandbox
 * leads, and an operator who later switches one to live keeps that choice.
 */
export async function defaultFormMode(db: Queryable, workspaceId: string, mode: 'live' | 'sandbox'): Promise<void> {
  await db.query(
    `UPDATE workspaces SET form_settings = form_settings || jsonb_build_object('mode', $2::text)
      WHERE id = $1 AND NOT form_settings ? 'mode'`,
    [workspaceId, mode],
  );
}
