import type { Pool } from '../db/pool.ts';
import type { IntegrationLogWriter } from '../integration-log/integration-log-writer.ts';
import type { LeadService } from '../leads/lead-service.ts';
import { fitMappedLead } from '../leads/lead-submission.ts';
import type { Clock } from '../shared/clock.ts';
import { AppError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import type { MappedLead } from './field-mapping.ts';
import { formKeyOf } from '../forms/form-key.ts';
import { sourceConfigOf } from './lead-source-config.ts';
import * as q from './lead-source-queries.ts';

// One lead from a connected source (a generic webhook, Google, Meta), through the same
// LeadService.submit as the API. A source retries what it thinks failed, so the source's own
// lead id decides: a delivery whose id already made a lead is answered as a success with that
// lead, before anything is counted or submitted, and never as a 409. Everything a source sends
// and what came of it is in the integration log (the Logs page); a failure also sets the
// source's last_error, which the Form page shows as its status. A source submits with the
// workspace's form key of the lead's mode (src/forms/form-key.ts): counted, limited and named on
// the lead like the hosted form's submissions.

export interface IntakeDelivery {
  /** The lead's fields as mapped from the payload. */
  lead: MappedLead;
  /** Campaign, ad group, ad and form ids… kept on the lead (source_detail). */
  detail: Record<string, unknown>;
  /** What the source sent, for the integration log (secrets masked by the writer). */
  payload: unknown;
  /** The source's secret, masked wherever it appears in the log entry. */
  secret?: string | null;
}

export type IntakeOutcome =
  /** A new lead. */
  | { outcome: 'created'; leadId: string; livemode: boolean }
  /** The source sent this lead before (same source lead id): its lead. */
  | { outcome: 'duplicate'; leadId: string; livemode: boolean }
  /** Another lead of the workspace has the phone already (the API's 409): nothing new stored. */
  | { outcome: 'duplicate-phone'; leadId: string | null; livemode: boolean };

export interface IntakeServiceDeps {
  pool: Pool;
  leads: Pick<LeadService, 'submit'>;
  workspaces: Pick<WorkspaceService, 'settingsOf'>;
  integrationLog: Pick<IntegrationLogWriter, 'record'>;
  clock: Clock;
  log: Logger;
  /** The hourly limit of a workspace's form key when it is created here (DEFAULT_HOURLY_LIMIT). */
  formKeyHourlyLimit: number;
}

/** The integration log's provider name of each kind of source. */
export const INTAKE_PROVIDER = { webhook: 'inbound-webhook', google: 'google-ads', meta: 'meta-leads' } as const;

export class IntakeService {
  readonly #d: IntakeServiceDeps;

  constructor(deps: IntakeServiceDeps) {
    this.#d = deps;
  }

  async submit(source: q.LeadSourceRow, delivery: IntakeDelivery): Promise<IntakeOutcome> {
    const started = performance.now();
    const livemode = !(delivery.lead.test || sourceConfigOf(source.config).sandbox);
    const sourceLeadId = delivery.lead.sourceLeadId;
    const done = async (o: IntakeOutcome): Promise<IntakeOutcome> => {
      await this.#record(source, delivery, { httpStatus: 200, outcome: o.outcome, leadId: o.leadId, started });
      return o;
    };
    try {
      const known = sourceLeadId ? await q.findLeadBySourceLeadId(this.#d.pool, source.id, sourceLeadId) : null;
      if (known) return done({ outcome: 'duplicate', leadId: known, livemode });
      const workspace = await q.findLiveWorkspaceById(this.#d.pool, source.workspaceId);
      if (!workspace) throw new AppError('route_not_found');
      const key = await formKeyOf(this.#d.pool, workspace.id, livemode, this.#d.formKeyHourlyLimit);
      // Our own mapping of the source's fields: cut to fit rather than refused (fitMappedLead).
      const body = { ...fitMappedLead(delivery.lead.body), consent: true };
      const result = await this.#d.leads.submit(JSON.stringify(body), {
        apiKeyId: key.id,
        hourlyLimit: key.hourlyLimit,
        workspace,
        livemode,
        onCounted: () => {},
        settings: () => this.#d.workspaces.settingsOf(workspace),
        // The request came from the source's servers, not from the person: no address to keep.
        clientIp: null,
        userAgent: null,
        intake: { source: source.kind, sourceId: source.id, sourceLeadId, detail: delivery.detail },
      });
      await q.recordSourceLead(this.#d.pool, source.id, this.#d.clock());
      return done({ outcome: 'created', leadId: result.leadId, livemode });
    } catch (err) {
      const settled = await this.#settleDuplicate(source, sourceLeadId, err, livemode);
      if (settled) return done(settled);
      const status = err instanceof AppError ? httpStatusOf(err) : 500;
      const message = errorLine(err);
      await this.#record(source, delivery, {
        httpStatus: status,
        outcome: 'error',
        leadId: null,
        started,
        error: message,
      });
      await this.#noteError(source, message);
      throw err;
    }
  }

  /** A delivery refused before its payload was read as a lead (bad signature or key, bad JSON). */
  async rejected(source: q.LeadSourceRow, httpStatus: number, reason: string, payload: unknown): Promise<void> {
    await this.#d.integrationLog.record({
      provider: INTAKE_PROVIDER[source.kind],
      workspaceId: source.workspaceId,
      direction: 'in',
      kind: `${source.kind} lead`,
      httpStatus,
      outcome: 'rejected',
      error: reason,
      payload: { sourceId: source.id, request: payload },
    });
    await this.#noteError(source, reason);
  }

  // The status is a courtesy to the Form page: failing to note it must not change the answer.
  async #noteError(source: q.LeadSourceRow, message: string): Promise<void> {
    await q.recordSourceError(this.#d.pool, source.id, message, this.#d.clock()).catch((e: Error) => {
      this.#d.log.warn({ err: e, sourceId: source.id }, 'lead source error not recorded');
    });
  }

  // The same lead twice at once, or a phone the workspace already has. A phone already known
  // under this source's lead id is the same delivery again (a voice lead is reserved before it
  // is dialled, so a retry racing the first attempt lands here, not in the unique index).
  async #settleDuplicate(
    source: q.LeadSourceRow,
    sourceLeadId: string | null,
    err: unknown,
    livemode: boolean,
  ): Promise<IntakeOutcome | null> {
    const phoneTaken = err instanceof AppError && err.code === 'duplicate_phone';
    const idTaken = (err as { code?: string; constraint?: string }).constraint === 'leads_source_lead';
    if (!phoneTaken && !idTaken) return null;
    const known = sourceLeadId ? await q.findLeadBySourceLeadId(this.#d.pool, source.id, sourceLeadId) : null;
    if (known) return { outcome: 'duplicate', leadId: known, livemode };
    if (!phoneTaken) return null;
    return { outcome: 'duplicate-phone', leadId: (err as AppError).details.leadId ?? null, livemode };
  }

  #record(
    source: q.LeadSourceRow,
    delivery: IntakeDelivery,
    r: { httpStatus: number; outcome: string; leadId: string | null; started: number; error?: string },
  ): Promise<void> {
    // The writer batches entries and turns its own failures into a warning line.
    return this.#d.integrationLog.record({
      provider: INTAKE_PROVIDER[source.kind],
      workspaceId: source.workspaceId,
      leadId: r.leadId,
      direction: 'in',
      kind: `${source.kind} lead`,
      httpStatus: r.httpStatus,
      outcome: r.outcome,
      latencyMs: performance.now() - r.started,
      error: r.error ?? null,
      payload: { sourceId: source.id, request: delivery.payload, detail: delivery.detail },
      ...(delivery.secret ? { secrets: [delivery.secret] } : {}),
    });
  }
}

function httpStatusOf(err: AppError): number {
  switch (err.code) {
    case 'invalid_json':
    case 'validation_failed':
    case 'consent_required':
      return 400;
    case 'rate_limited':
      return 429;
    case 'voice_dispatch_failed':
      return 502;
    default:
      return 500;
  }
}

/** What went wrong, in a line for the Logs page and the Form page: the validation issues by field. */
function errorLine(err: unknown): string {
  if (err instanceof AppError) {
    const issues = err.details.issues?.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
    return issues ? `${err.message}: ${issues}` : err.message;
  }
  return 'internal error';
}
