import crypto from 'node:crypto';

// The hosted form's defences against bots and floods (docs/INTAKE.md, "The hosted form"):
// - a honeypot field people never see (a bot that fills it is thanked and nothing is stored);
// - a minimum fill time: the page carries the time it was rendered, signed (HMAC keyed from the
//   installation's secret), and a POST sooner than MIN_FILL_MS after it is sent back to the form;
// - hourly limits per address and per workspace (src/auth/intake-limits.ts, shared with publishable
//   keys); the address is kept only as a keyed hash, never in clear.

export const HONEYPOT_FIELD = 'website';
export const MIN_FILL_MS = 3_000;
/** Older than this, a page's token is refused as stale (the form is shown again with a fresh one). */
export const MAX_FILL_MS = 24 * 60 * 60 * 1000;
export const ADDRESS_HOURLY_LIMIT = 20;

export class FormAbuseGuard {
  readonly #key: Buffer;

  /** `key`: derived from the installation's secret for this one purpose. */
  constructor(key: Buffer) {
    this.#key = key;
  }

  #mac(what: string): string {
    return crypto.createHmac('sha256', this.#key).update(what).digest('base64url');
  }

  /** `<ms>.<mac>`: the time the page was rendered, bound to the workspace. */
  fillToken(workspaceId: string, now: Date): string {
    const ms = String(now.getTime());
    return `${ms}.${this.#mac(`fill:${workspaceId}:${ms}`)}`;
  }

  /** 'ok', 'too_fast' (also a token from the future), or 'invalid' (missing, forged, stale). */
  checkFillToken(workspaceId: string, token: string | undefined, now: Date): 'ok' | 'too_fast' | 'invalid' {
    const m = /^(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(token ?? '');
    if (!m) return 'invalid';
    const expected = Buffer.from(this.#mac(`fill:${workspaceId}:${m[1]}`));
    const given = Buffer.from(m[2]!);
    if (expected.length !== given.length || !crypto.timingSafeEqual(expected, given)) return 'invalid';
    const elapsed = now.getTime() - Number(m[1]);
    if (elapsed < MIN_FILL_MS) return 'too_fast';
    if (elapsed > MAX_FILL_MS) return 'invalid';
    return 'ok';
  }
}
