import crypto from 'node:crypto';
import type { Pool } from '../db/pool.ts';
import { AppError } from '../shared/errors.ts';
import type { Clock } from '../shared/clock.ts';
import * as q from './operator-queries.ts';
import {
  dummyHash,
  generatePassword,
  hashPassword,
  needsRehash,
  verifyPassword,
  type ScryptParams,
} from './password.ts';
import type { Role } from './roles.ts';
import { reserveAttempt, type ThrottlePolicy } from './sign-in-throttle.ts';

// Operators (people who use the dashboard), their memberships and sessions. Knows nothing of
// HTTP: the CLI and the admin routes both call it.

export interface SignedIn {
  operator: { id: string; email: string; name: string };
  csrfToken: string;
  memberships: q.Membership[];
}

export interface OperatorServiceOptions {
  pool: Pool;
  clock: Clock;
  idleMs: number;
  /** Absolute lifetime of a session, however busy. */
  maxAgeMs: number;
  throttle: ThrottlePolicy;
  /** scrypt parameters of new hashes; a hash with others is redone at its next sign-in. */
  password: ScryptParams;
}

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();
const tokenHash = (token: string): Buffer => crypto.createHash('sha256').update(token).digest();

export class OperatorService {
  readonly #o: OperatorServiceOptions;

  constructor(opts: OperatorServiceOptions) {
    this.#o = opts;
  }

  #limits = () => ({ idleMs: this.#o.idleMs, maxAgeMs: this.#o.maxAgeMs });

  /** Creates an operator with a generated password, returned once; null when the e-mail is taken. */
  async create(email: string, name?: string): Promise<{ email: string; password: string } | null> {
    const address = normalizeEmail(email);
    const password = generatePassword();
    const row = await q.insertOperator(this.#o.pool, {
      email: address,
      name: name?.trim() || address.split('@')[0]!,
      passwordHash: await hashPassword(password, this.#o.password),
    });
    return row ? { email: address, password } : null;
  }

  /** Gives the operator a role in the workspace (or changes it). */
  async addMembership(email: string, workspaceId: string, role: Role): Promise<boolean> {
    const op = await q.findOperatorByEmail(this.#o.pool, normalizeEmail(email));
    if (!op) return false;
    await q.upsertMembership(this.#o.pool, op.id, workspaceId, role);
    return true;
  }

  list() {
    return q.listOperators(this.#o.pool);
  }

  remove(email: string): Promise<boolean> {
    return q.deleteOperator(this.#o.pool, normalizeEmail(email));
  }

  /** A new generated password (returned once); every session of the operator ends. */
  async resetPassword(email: string): Promise<string | null> {
    const password = generatePassword();
    const id = await q.setPasswordHash(
      this.#o.pool,
      normalizeEmail(email),
      await hashPassword(password, this.#o.password),
    );
    if (!id) return null;
    await q.deleteSessionsOf(this.#o.pool, id);
    return password;
  }

  /**
   * Checks the password (throttled per account and client address, and per address) and opens a
   * session; returns its cookie token. The attempt is reserved before the password is checked,
   * so concurrent attempts cannot all slip under the limit.
   */
  async signIn(email: string, password: string, ip: string): Promise<{ token: string } & SignedIn> {
    const address = normalizeEmail(email);
    const now = this.#o.clock();
    const attempt = await reserveAttempt(this.#o.pool, this.#o.throttle, address, ip, now);
    if (attempt.wait !== null) throw new AppError('sign_in_throttled', { retryAfterSeconds: attempt.wait });
    const op = await q.findOperatorByEmail(this.#o.pool, address);
    const ok = await verifyPassword(password, op?.passwordHash ?? (await dummyHash(this.#o.password)));
    if (!op || !ok) throw new AppError('sign_in_failed');
    await attempt.release(this.#o.pool);
    if (needsRehash(op.passwordHash, this.#o.password)) {
      await q.replacePasswordHash(this.#o.pool, op.id, op.passwordHash, await hashPassword(password, this.#o.password));
    }
    const token = crypto.randomBytes(32).toString('base64url');
    const csrfToken = crypto.randomBytes(24).toString('base64url');
    const session = { tokenHash: tokenHash(token), operatorId: op.id, csrfToken, at: now };
    await q.insertSession(this.#o.pool, session, this.#limits());
    const memberships = await q.membershipsOf(this.#o.pool, op.id);
    return { token, operator: { id: op.id, email: op.email, name: op.name }, csrfToken, memberships };
  }

  /**
   * The session's operator, or null when the token is unknown, idle too long or past its absolute
   * lifetime. `touch: false` checks without counting as use (a live stream's heartbeat).
   */
  async session(token: string, opts: { touch?: boolean } = {}): Promise<SignedIn | null> {
    const s = await q.findSession(this.#o.pool, tokenHash(token), this.#o.clock(), this.#limits(), opts.touch ?? true);
    if (!s) return null;
    return { ...s, memberships: await q.membershipsOf(this.#o.pool, s.operator.id) };
  }

  /** The hash a new password gets (an invitation's new account). */
  hashPassword(password: string): Promise<string> {
    return hashPassword(password, this.#o.password);
  }

  signOut(token: string): Promise<void> {
    return q.deleteSession(this.#o.pool, tokenHash(token));
  }

  signOutEverywhere(operatorId: string): Promise<number> {
    return q.deleteSessionsOf(this.#o.pool, operatorId);
  }
}
