import type { FastifyInstance, FastifyRequest } from 'fastify';
import { addSuppressed, leadNumber, listSuppressed, removeSuppressed } from '../../contact-plan/suppressed-numbers.ts';
import type { Pool } from '../../db/pool.ts';
import { registerRoute } from '../../http/route-contract.ts';
import { normalizePhone } from '../../leads/phone.ts';
import type { OperatorService } from '../../operators/operator-service.ts';
import type { Permission } from '../../operators/roles.ts';
import { AppError } from '../../shared/errors.ts';
import { requireMembership, requireSession } from '../admin-auth.ts';
import * as c from './do-not-contact-contracts.ts';
import type { DncChanged, DncList } from './do-not-contact-schemas.ts';

// The do-not-contact list (docs/DASHBOARD.md, "Do not contact"): every member reads it, agents and
// up add numbers (the list's form: source `api`; a lead page's button: source `operator`), and
// only admins take one off (contact may then happen again). Adds and removals are audited.

export interface DoNotContactDeps {
  pool: Pool;
  operators: OperatorService;
}

type Params = { Params: { slug: string; id?: string } };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function e164(raw: string): string {
  const phone = normalizePhone(raw);
  if (!phone)
    throw new AppError('validation_failed', { issues: [{ path: ['phone'], message: 'Not a phone number.' }] });
  return phone;
}

export function doNotContactRoutes(deps: DoNotContactDeps) {
  const scopeOf = async (request: FastifyRequest<Params>, permission: Permission) => {
    const session = await requireSession(deps.operators, request);
    const membership = requireMembership(session, request.params.slug, permission);
    return { workspaceId: membership.workspaceId, operatorId: session.operator.id };
  };
  return async (scope: FastifyInstance): Promise<void> => {
    registerRoute(scope, c.listDoNotContactRoute, async (request, _reply, input): Promise<DncList> => {
      const s = await scopeOf(request, 'leads.read');
      const q = input.query();
      const page = await listSuppressed(deps.pool, s.workspaceId, { offset: q.offset ?? 0, limit: q.limit ?? 50 });
      return {
        ok: true,
        total: page.total,
        numbers: page.numbers.map((n) => ({ ...n, createdAt: n.createdAt.toISOString() })),
      };
    });
    registerRoute(
      scope,
      c.addDoNotContactRoute,
      async (request, _reply, input): Promise<DncChanged> => {
        const s = await scopeOf(request, 'leads.act');
        const body = input.body();
        const phone = e164(body.phone);
        const changed = await addSuppressed(deps.pool, {
          workspaceId: s.workspaceId,
          phoneE164: phone,
          source: 'api',
          note: body.note || null,
          operatorId: s.operatorId,
          leadId: null,
        });
        return { ok: true, phone, changed };
      },
      { audit: 'do_not_contact.added' },
    );
    registerRoute(
      scope,
      c.removeDoNotContactRoute,
      async (request, _reply, input): Promise<DncChanged> => {
        const s = await scopeOf(request, 'settings.manage');
        const phone = e164(input.body().phone);
        const changed = await removeSuppressed(deps.pool, { ...s, phoneE164: phone });
        return { ok: true, phone, changed };
      },
      { audit: 'do_not_contact.removed' },
    );
    registerRoute(
      scope,
      c.leadDoNotContactRoute,
      async (request, _reply, input): Promise<DncChanged> => {
        const s = await scopeOf(request, 'leads.act');
        const leadId = request.params.id ?? '';
        const lead = UUID.test(leadId) ? await leadNumber(deps.pool, s.workspaceId, leadId) : null;
        if (!lead) throw new AppError('lead_not_found');
        const changed = await addSuppressed(deps.pool, {
          workspaceId: s.workspaceId,
          phoneE164: lead.phoneE164,
          source: 'operator',
          note: input.body().note || null,
          operatorId: s.operatorId,
          leadId,
        });
        return { ok: true, phone: lead.phoneE164, changed };
      },
      { audit: 'do_not_contact.added' },
    );
  };
}
