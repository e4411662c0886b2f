import { z } from 'zod';
import { withTransaction, type Pool } from '../db/pool.ts';
import { parse } from '../shared/schema-parse.ts';
import { AppError } from '../shared/errors.ts';
import {
  formSettingsOf,
  formSettingsSchema,
  readFormSettingsColumn,
  writeFormSettingsColumn,
  type FormSettings,
} from '../workspaces/form-settings.ts';
import type { SecretBox } from '../workspaces/secret-box.ts';
import type { WorkspaceRow } from '../workspaces/workspace-queries.ts';
import { currentConsentText, type ConsentText } from './consent-texts.ts';
import { FORM_STRINGS } from './form-strings.ts';

// What the Form page (F5's admin API) and the hosted form call: the form's settings read and
// saved (a changed consent text makes a new version at once), Turnstile's secret sealed, and the
// logo stored and served. Turnstile's secret is sealed with the workspace's secret box, bound to
// the workspace and its purpose, and kept in form_settings beside its site key: it belongs to the
// form alone, and the form's settings are read on every page without opening the provider
// credentials.

/** As the dashboard shows them: Turnstile's secret only as "set". */
export interface FormSettingsView extends Omit<FormSettings, 'turnstile'> {
  turnstile: { siteKey: string; secretSet: boolean } | null;
  /** The consent text the form shows now, and its version. */
  consent: ConsentText;
}

/** What the dashboard saves: the whole settings; Turnstile's secret only when it changes. */
export const formSettingsInputSchema = formSettingsSchema.omit({ turnstile: true }).extend({
  turnstile: z
    .object({ siteKey: z.string().trim().min(1).max(200), secret: z.string().trim().min(1).max(200).optional() })
    .strict()
    .nullable()
    .optional(),
});
export type FormSettingsInput = z.input<typeof formSettingsInputSchema>;

export const LOGO_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/svg+xml'] as const;
export type LogoType = (typeof LOGO_TYPES)[number];
export const MAX_LOGO_BYTES = 256 * 1024;

const turnstileBinding = (workspaceId: string) => `${workspaceId}:form-turnstile`;

export class FormSettingsService {
  readonly #pool: Pool;
  readonly #box: SecretBox;

  constructor(pool: Pool, box: SecretBox) {
    this.#pool = pool;
    this.#box = box;
  }

  async settings(workspaceId: string): Promise<FormSettings> {
    return formSettingsOf(await readFormSettingsColumn(this.#pool, workspaceId));
  }

  /** The consent text to show (the workspace's, else the default of its language), as a version. */
  async consentText(workspace: WorkspaceRow, settings: FormSettings): Promise<ConsentText> {
    const text = settings.consentText ?? FORM_STRINGS[settings.language].defaultConsent(workspace.name);
    return currentConsentText(this.#pool, workspace.id, text);
  }

  async read(workspace: WorkspaceRow): Promise<FormSettingsView> {
    const settings = await this.settings(workspace.id);
    return this.#view(settings, await this.consentText(workspace, settings));
  }

  /** Replaces the settings (throws `validation_failed`); a changed consent text is a new version. */
  async save(workspace: WorkspaceRow, input: unknown): Promise<FormSettingsView> {
    const given = parse(formSettingsInputSchema, input);
    const saved = await withTransaction(this.#pool, async (tx) => {
      await tx.query('SELECT 1 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE', [workspace.id]);
      const before = formSettingsOf(await readFormSettingsColumn(tx, workspace.id));
      const { turnstile, ...rest } = given;
      let sealed: FormSettings['turnstile'];
      if (turnstile) {
        const secretSealed = turnstile.secret
          ? this.#box.seal(turnstile.secret, turnstileBinding(workspace.id)).toString('base64')
          : before.turnstile?.secretSealed;
        if (!secretSealed)
          throw new AppError('validation_failed', {
            issues: [{ path: ['turnstile', 'secret'], message: 'turnstile.secret is required with a new site key' }],
          });
        sealed = { siteKey: turnstile.siteKey, secretSealed };
      }
      const stored = formSettingsSchema.parse({ ...rest, ...(sealed ? { turnstile: sealed } : {}) });
      await writeFormSettingsColumn(tx, workspace.id, stored);
      return stored;
    });
    return this.#view(saved, await this.consentText(workspace, saved));
  }

  /** Turnstile's secret, opened; null when the form has no Turnstile. */
  turnstileSecret(workspaceId: string, settings: FormSettings): string | null {
    const sealed = settings.turnstile?.secretSealed;
    if (!sealed) return null;
    return this.#box.open(Buffer.from(sealed, 'base64'), turnstileBinding(workspaceId)) as string;
  }

  /** Stores the logo (throws `validation_failed` for a type, size or content that is not an image). */
  async saveLogo(workspaceId: string, contentType: string, bytes: Buffer): Promise<void> {
    const problem = logoProblem(contentType, bytes);
    if (problem) throw new AppError('validation_failed', { issues: [{ path: ['logo'], message: problem }] });
    await this.#pool.query(
      `INSERT INTO workspace_logos (workspace_id, content_type, bytes) VALUES ($1, $2, $3)
       ON CONFLICT (workspace_id) DO UPDATE SET content_type = $2, bytes = $3, updated_at = now()`,
      [workspaceId, contentType, bytes],
    );
  }

  async deleteLogo(workspaceId: string): Promise<void> {
    await this.#pool.query('DELETE FROM workspace_logos WHERE workspace_id = $1', [workspaceId]);
  }

  async logo(workspaceId: string): Promise<{ contentType: LogoType; bytes: Buffer; updatedAt: Date } | null> {
    const { rows } = await this.#pool.query(
      'SELECT content_type, bytes, updated_at FROM workspace_logos WHERE workspace_id = $1',
      [workspaceId],
    );
    return rows[0] ? { contentType: rows[0].content_type, bytes: rows[0].bytes, updatedAt: rows[0].updated_at } : null;
  }

  async hasLogo(workspaceId: string): Promise<boolean> {
    const { rowCount } = await this.#pool.query('SELECT 1 FROM workspace_logos WHERE workspace_id = $1', [workspaceId]);
    return rowCount === 1;
  }

  #view(settings: FormSettings, consent: ConsentText): FormSettingsView {
    const { turnstile, ...rest } = settings;
    return {
      ...rest,
      turnstile: turnstile ? { siteKey: turnstile.siteKey, secretSet: Boolean(turnstile.secretSealed) } : null,
      consent,
    };
  }
}

// The bytes must be what the type says: a browser sniffing an HTML file served as an image is
// what nosniff prevents, and checking here keeps such a file out of the table in the first place.
function logoProblem(contentType: string, bytes: Buffer): string | null {
  if (!(LOGO_TYPES as readonly string[]).includes(contentType))
    return 'The logo must be a PNG, JPEG, WebP or SVG image.';
  if (bytes.length === 0 || bytes.length > MAX_LOGO_BYTES) return 'The logo must be at most 256 KiB.';
  const head = bytes.subarray(0, 16);
  const ok =
    contentType === 'image/png'
      ? head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
      : contentType === 'image/jpeg'
        ? head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff
        : contentType === 'image/webp'
          ? head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP'
          : /<svg[\s>]/i.test(bytes.subarray(0, 4096).toString('utf8'));
  return ok ? null : 'The file is not the image its type says.';
}
