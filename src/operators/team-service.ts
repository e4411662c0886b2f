import crypto from 'node:crypto';
import { withTransaction, type Pool, type Queryable } from '../db/pool.ts';
import type { Clock } from '../shared/clock.ts';
import { AppError } from '../shared/errors.ts';
import { normalizeEmail } from './operator-service.ts';
import * as oq from './operator-queries.ts';
import { hashPassword } from './password.ts';
import type { Role } from './roles.ts';
import { reserveAddressAttempt, type ThrottlePolicy } from './sign-in-throttle.ts';
import * as q from './team-queries.ts';

// A workspace's team (docs/DASHBOARD.md, "Providers, API keys and team"): members with roles,
// invitations by one-time link (no mail server is assumed: the owner passes the link on), role
// changes and removal under the last-owner rule. Knows nothing of HTTP.

/** How long an invitation link works. */
export const INVITE_TTL_MS = 7 * 24 * 3600 * 1000;

const tokenHash = (token: string): Buffer => crypto.createHash('sha256').update(token).digest();

export class TeamService {
  readonly #pool: Pool;
  readonly #clock: Clock;
  readonly #hashPassword: (password: string) => Promise<string>;
  readonly #throttle: Pick<ThrottlePolicy, 'windowMs' | 'maxPerIp'>;

  /**
   * `hashPassword`: the operators' (OperatorService.hashPassword), so a new account gets the
   * configured cost. `throttle`: the sign-in throttle's (its per-address limit counts a new
   * account's acceptance with the address's sign-ins).
   */
  constructor(opts: {
    pool: Pool;
    clock: Clock;
    hashPassword?: (password: string) => Promise<string>;
    throttle: Pick<ThrottlePolicy, 'windowMs' | 'maxPerIp'>;
  }) {
    this.#pool = opts.pool;
    this.#clock = opts.clock;
    this.#hashPassword = opts.hashPassword ?? ((password) => hashPassword(password));
    this.#throttle = opts.throttle;
  }

  async team(workspaceId: string) {
    const [members, invites] = await Promise.all([
      q.listMembers(this.#pool, workspaceId),
      q.listPendingInvites(this.#pool, workspaceId, this.#clock()),
    ]);
    return { members, invites };
  }

  /** A new invitation; returns it with its token (shown once, only its hash is stored). */
  async invite(
    workspaceId: string,
    email: string,
    role: Role,
    invitedBy: string,
  ): Promise<{ invite: q.PendingInvite; token: string }> {
    const address = normalizeEmail(email);
    if (await q.isMember(this.#pool, workspaceId, address)) throw new AppError('already_member');
    const token = crypto.randomBytes(32).toString('base64url');
    const now = this.#clock();
    const invite = await q.insertInvite(this.#pool, {
      tokenHash: tokenHash(token),
      workspaceId,
      email: address,
      role,
      invitedBy,
      now,
      expiresAt: new Date(now.getTime() + INVITE_TTL_MS),
    });
    return { invite, token };
  }

  cancelInvite(workspaceId: string, id: string): Promise<boolean> {
    return q.deleteInvite(this.#pool, workspaceId, id);
  }

  /**
   * What the invitee's page shows before accepting; null when unknown, used or expired. Not
   * whether the address has an account: the link passes through the inviting owner's hands, and
   * the installation's accounts are none of that workspace's business.
   */
  lookup(token: string): Promise<q.InviteRow | null> {
    return q.findInvite(this.#pool, tokenHash(token), this.#clock());
  }

  /**
   * Accepts the invitation of `slug`: for a signed-in operator (their e-mail must be the invited
   * one), or by creating the account with the name and password given. The link reaching the
   * invited address is taken as proof of it (no mail server is assumed), so it may create that
   * address's account; it never touches an existing one: that takes signing in as it (409
   * otherwise, nothing changed). One use: the row is deleted in the same transaction, under a
   * lock, so two tabs cannot both accept.
   *
   * A new account is asked for without signing in, so it is throttled like a sign-in from `ip`
   * (the address's failures count; 429 `sign_in_throttled` at the limit), and its password is
   * hashed only once the invitation is known to be usable: a made-up or used token costs no hash.
   */
  async accept(
    token: string,
    slug: string,
    who: { operatorId: string; email: string } | { name: string; password: string; ip: string },
  ): Promise<{ email: string; workspaceId: string }> {
    if ('operatorId' in who) {
      return this.#join(token, slug, async (invite) => {
        if (who.email !== invite.email) throw new AppError('invite_other_account');
        return who.operatorId;
      });
    }
    const attempt = await reserveAddressAttempt(this.#pool, this.#throttle, who.ip, this.#clock());
    if (attempt.wait !== null) throw new AppError('sign_in_throttled', { retryAfterSeconds: attempt.wait });
    // Checked before the hash (which holds 128 MiB and one of two hash slots for about half a
    // second), then again under the lock below: another request may use the link or create the
    // account in between.
    const found = await q.findInvite(this.#pool, tokenHash(token), this.#clock());
    if (!found || found.slug !== slug) throw new AppError('invite_not_found');
    if (await oq.findOperatorByEmail(this.#pool, found.email)) throw new AppError('invite_account_exists');
    const passwordHash = await this.#hashPassword(who.password);
    return this.#join(token, slug, async (invite, tx) => {
      const created = await oq.insertOperator(tx, { email: invite.email, name: who.name, passwordHash });
      if (!created) throw new AppError('invite_account_exists');
      // Accepted: the attempt is taken back with the invitation's use (the sign-in that follows counts its own).
      await attempt.release(tx);
      return created.id;
    });
  }

  /** Under the invitation's row lock: `member` says who joins (or throws), then the link is used up. */
  #join(
    token: string,
    slug: string,
    member: (invite: q.InviteRow, tx: Queryable) => Promise<string>,
  ): Promise<{ email: string; workspaceId: string }> {
    return withTransaction(this.#pool, async (tx) => {
      const invite = await q.findInvite(tx, tokenHash(token), this.#clock(), true);
      if (!invite || invite.slug !== slug) throw new AppError('invite_not_found');
      const operatorId = await member(invite, tx);
      await q.addMembershipKeepingRole(tx, operatorId, invite.workspaceId, invite.role);
      await q.consumeInvite(tx, invite.id);
      return { email: invite.email, workspaceId: invite.workspaceId };
    });
  }

  /**
   * `actorId` is the owner asking. Their role is checked again under the lock: the session's check
   * ran before it, and another owner may have demoted them in between (two owners demoting each
   * other at once must not both succeed).
   */
  async changeRole(workspaceId: string, actorId: string, operatorId: string, role: Role): Promise<void> {
    await withTransaction(this.#pool, async (tx) => {
      const roles = await q.lockRoles(tx, workspaceId);
      if (roles.get(actorId) !== 'owner') throw new AppError('forbidden');
      const current = roles.get(operatorId);
      if (!current) throw new AppError('member_not_found');
      if (current === 'owner' && role !== 'owner' && ownerCount(roles) === 1) throw new AppError('last_owner');
      await q.setRole(tx, workspaceId, operatorId, role);
    });
  }

  /** `actorId` as for `changeRole`. */
  async remove(workspaceId: string, actorId: string, operatorId: string): Promise<void> {
    await withTransaction(this.#pool, async (tx) => {
      const roles = await q.lockRoles(tx, workspaceId);
      if (roles.get(actorId) !== 'owner') throw new AppError('forbidden');
      const current = roles.get(operatorId);
      if (!current) throw new AppError('member_not_found');
      if (current === 'owner' && ownerCount(roles) === 1) throw new AppError('last_owner');
      await q.deleteMembership(tx, workspaceId, operatorId);
    });
  }
}

const ownerCount = (roles: Map<string, Role>): number => [...roles.values()].filter((r) => r === 'owner').length;
