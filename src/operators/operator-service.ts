import crypto from 'node:crypto';
import type { Pool } from '../db/pool.ts';
import { AppError } from '../shared/errors.ts';
import type { Clock } from '../shared/clock.ts';
import * as q from './operator-queries.ts';
import { dummyHash, generatePassword, hashPassword, verifyPassword } from './password.ts';
import type { Role } from './roles.ts';
import { clearAccountFailures, recordFailure, throttled, type ThrottlePolicy } from './sign-in-throttle.ts';

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
  throttle: ThrottlePolicy;
}

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();
const tokenHash = (token: string): Buffer => crypto.createHash('sha256').update(token).digest();

export class OperatorService {
  readonly #o: OperatorServiceOptions;

  constructor(opts: OperatorServiceOptions) {
    this.#o = opts;
  }

  /** Creates an operator with a generated password, returned once; null when the e-mail is taken. */
  async create(email: string, name?: string): Promise<{ email: string; password: string } | null> {
    const address = normalizeEmail(email);
    const password = generatePassword();
    const row = await q.insertOperator(this.#o.pool, { email: address, name: name?.trim() || address.split('@')[0]!, passwordHash: await hashPassword(password) });
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
    const id = await q.setPasswordHash(this.#o.pool, normalizeEmail(email), await hashPassword(password));
    if (!id) return null;
    await q.deleteSessionsOf(this.#o.pool, id);
    return password;
  }

  /** Checks the password (throttled per account and IP) and opens a session; returns its cookie token. */
  async signIn(email: string, password: string, ip: string): Promise<{ token: string } & SignedIn> {
    const address = normalizeEmail(email);
    const now = this.#o.clock();
    const wait = await throttled(this.#o.pool, this.#o.throttle, address, ip, now);
    if (wait !== null) throw new AppError('sign_in_throttled', { retryAfterSeconds: wait });
    const op = await q.findOperatorByEmail(this.#o.pool, address);
    const ok = await verifyPassword(password, op?.passwordHash ?? (await dummyHash()));
    if (!op || !ok) {
      await recordFailure(this.#o.pool, this.#o.throttle, address, ip, now);
      throw new AppError('sign_in_failed');
    }
    await clearAccountFailures(this.#o.pool, address);
    const token = crypto.randomBytes(32).toString('base64url');
    const csrfToken = crypto.randomBytes(24).toString('base64url');
    await q.insertSession(this.#o.pool, { tokenHash: tokenHash(token), operatorId: op.id, csrfToken, at: now });
    return { token, operator: { id: op.id, email: op.email, name: op.name }, csrfToken, memberships: await q.membershipsOf(this.#o.pool, op.id) };
  }

  /** The session's operator, or null when the token is unknown or idle too long. */
  async session(token: string): Promise<SignedIn | null> {
    const s = await q.touchSession(this.#o.pool, tokenHash(token), this.#o.clock(), this.#o.idleMs);
    if (!s) return null;
    return { ...s, memberships: await q.membershipsOf(this.#o.pool, s.operator.id) };
  }

  signOut(token: string): Promise<void> {
    return q.deleteSession(this.#o.pool, tokenHash(token));
  }

  signOutEverywhere(operatorId: string): Promise<number> {
    return q.deleteSessionsOf(this.#o.pool, operatorId);
  }
}
