import type { IntegrationLogWriter } from '../../integration-log/integration-log-writer.ts';
import { AppError, type ValidationIssue } from '../../shared/errors.ts';
import type { Logger } from '../../shared/logger.ts';
import {
  answerMetaVerification,
  verifyMetaSignature,
  type MetaVerificationAnswer,
} from '../../whatsapp/meta/meta-signature.ts';
import { INTAKE_PROVIDER, type IntakeDelivery, type IntakeOutcome } from '../intake-service.ts';
import type { LeadSourceRow } from '../lead-source-queries.ts';
import type { MetaLead, MetaLeadClient } from './meta-lead-client.ts';
import { mapMetaLead, metaLeadDetail } from './meta-lead-mapping.ts';
import { type LeadgenNotice, type LeadgenWebhook, parseLeadgenWebhook } from './meta-leadgen-webhook.ts';
import { readMetaConfig, type MetaSourceConfig, type MetaSourceSecret } from './meta-source-settings.ts';

// Meta Lead Ads (docs/INTAKE.md, "Meta Lead Ads"): the `leadgen` webhook of a connected Page,
// `/api/intake/meta/<token>`, and the backfill. Each announced lead is read from the Graph API
// with the source's Page token, mapped, and submitted through the intake like any lead; the
// source's own lead id (the leadgen id) makes a repeated webhook or a backfill find the lead it
// already made.
//
// A signed webhook is answered 200 even when the Graph API fails: Meta retries failed deliveries
// and turns off a subscription that keeps failing, which would lose every later lead too. The
// failure is on the source (last_error, the Form page) and in the integration log. A lead that
// failed for a temporary reason (Graph unreachable or 5xx/429, the form key's hourly limit, Vapi
// refusing the call) is read and submitted again by a job, with back-off (meta-lead-retry.ts);
// `leadintake source backfill` fetches what is still missing.

/** A `meta` lead source as the intake finds it by its URL token, its secrets opened. */
export interface MetaSource {
  id: string;
  workspaceId: string;
  config: unknown;
  secret: MetaSourceSecret;
  row: LeadSourceRow;
}

/** What the intake (src/intake/, LeadSourceService and IntakeService) does for this file. */
export interface MetaIntakePorts {
  /** The live (not revoked) `meta` source with this token, its secret opened; null when none. */
  findSource(token: string): Promise<MetaSource | null>;
  /**
   * IntakeService.submit: through LeadService, a lead already made from this source lead id
   * returned, not made again; a refusal recorded (integration log, last_error) and thrown.
   */
  submit(source: MetaSource, delivery: IntakeDelivery): Promise<IntakeOutcome>;
  /** Sets last_error / last_error_at on the source (the message is token-free). */
  recordError(sourceId: string, message: string): Promise<void>;
  /**
   * IntakeService.rejected: a delivery (or part of one) refused before it was read as a lead, in
   * the integration log (provider `meta-leads`, outcome `rejected`) and as last_error. `payload`
   * is stored as given (unmasked): never the body's text, never a secret.
   */
  rejected(source: MetaSource, httpStatus: number, reason: string, payload: unknown): Promise<void>;
  /** Queues the first retry of a leadgen id that failed for a temporary reason (meta-lead-retry.ts). */
  scheduleRetry(source: MetaSource, leadgenId: string, pageId?: string): Promise<void>;
}

export interface MetaIntakeDeps extends MetaIntakePorts {
  integrationLog: Pick<IntegrationLogWriter, 'record'>;
  /** The Graph client of a source's Page token (src/composition.ts builds it). */
  leadClient(secret: MetaSourceSecret): MetaLeadClient;
}

export type LeadOutcome =
  | { kind: 'created' | 'duplicate'; leadId: string; livemode: boolean }
  /** Another lead of the workspace has the phone (the API's 409): nothing new stored. */
  | { kind: 'duplicate-phone'; leadId: string | null; livemode: boolean }
  | { kind: 'skipped'; reason: string }
  /** `temporary`: worth reading and submitting again later (the webhook queues a retry). */
  | { kind: 'failed'; message: string; temporary?: true };

/** Refusals of a submission that may pass later: the form key's hourly limit, Vapi refusing the call. */
const TEMPORARY_REFUSALS: ReadonlySet<string> = new Set(['rate_limited', 'voice_dispatch_failed']);

export class MetaIntakeService {
  readonly #d: MetaIntakeDeps;

  constructor(deps: MetaIntakeDeps) {
    this.#d = deps;
  }

  /** The App Dashboard's subscription handshake; an unknown token is refused like a wrong verify token. */
  async verification(token: string, query: Record<string, unknown>): Promise<MetaVerificationAnswer> {
    const source = await this.#d.findSource(token);
    if (!source) return { status: 403, body: 'Forbidden' };
    return answerMetaVerification(query, source.secret.verifyToken);
  }

  /**
   * A `leadgen` webhook POST. Throws route_not_found (no such source), webhook_signature_invalid,
   * or invalid_json / validation_failed (a signed body that is not Meta's); each refusal is recorded
   * (integration log, last_error) before it is thrown. A malformed change does not refuse the
   * batch: the others are read, and it is recorded the same way.
   */
  async webhook(token: string, raw: Buffer, signature: string | undefined, log: Logger): Promise<LeadOutcome[]> {
    const started = performance.now();
    const source = await this.#d.findSource(token);
    if (!source) throw new AppError('route_not_found');
    if (!verifyMetaSignature(source.secret.appSecret, raw, signature)) {
      log.warn({ workspaceId: source.workspaceId, sourceId: source.id }, 'meta leadgen webhook signature rejected');
      // Only the size: nothing of an unauthenticated body is kept (anyone with the URL can send one).
      const reason = signature
        ? 'X-Hub-Signature-256 does not match the body signed with the app secret of this source.'
        : 'X-Hub-Signature-256 is missing.';
      await this.#d.rejected(source, 401, reason, { bytes: raw.length });
      throw new AppError('webhook_signature_invalid');
    }
    let body: LeadgenWebhook;
    try {
      body = parseLeadgenWebhook(raw);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      // The issues (paths and messages), not the body: what is wrong without what was sent.
      const issues = err.details.issues ?? [];
      const reason = `The body is not a Meta leadgen webhook: ${issueLine(issues, err.message)}`;
      await this.#d.rejected(source, 400, reason, { bytes: raw.length, issues });
      throw err;
    }
    const { notices, invalid } = body;
    const config = readMetaConfig(source.config);
    const outcomes: LeadOutcome[] = [];
    // One after the other: a batch is small, and each lead's Graph read is its own request.
    for (const notice of notices) outcomes.push(await this.#notice(source, config, notice));
    await this.#d.integrationLog.record({
      provider: INTAKE_PROVIDER.meta,
      workspaceId: source.workspaceId,
      direction: 'in',
      kind: 'leadgen',
      httpStatus: 200,
      outcome: summary(outcomes),
      latencyMs: Math.round(performance.now() - started),
      payload: { request: { notices }, response: { outcomes } },
      secrets: secretsOf(source),
    });
    // After the batch's leads, so the source shows as failing. Answered 200 all the same: the
    // change would be as malformed on every retry, and retries end with the subscription off.
    if (invalid.length > 0) {
      const reason = `A leadgen change of the webhook is malformed and was not read: ${issueLine(invalid, 'invalid')}`;
      await this.#d.rejected(source, 200, reason, { bytes: raw.length, issues: invalid });
    }
    return outcomes;
  }

  /** The Graph client of a source (the backfill pages through forms with it). */
  client(source: MetaSource): MetaLeadClient {
    return this.#d.leadClient(source.secret);
  }

  async #notice(source: MetaSource, config: MetaSourceConfig, notice: LeadgenNotice): Promise<LeadOutcome> {
    if (config.pageId && notice.pageId && notice.pageId !== config.pageId)
      return { kind: 'skipped', reason: 'other-page' };
    const outcome = await this.readAndSubmit(source, config, notice.leadgenId, notice.pageId);
    if (outcome.kind === 'failed' && outcome.temporary)
      await this.#d.scheduleRetry(source, notice.leadgenId, notice.pageId);
    return outcome;
  }

  /** Reads one lead from Graph by its leadgen id and submits it (the webhook, and its retries). */
  async readAndSubmit(
    source: MetaSource,
    config: MetaSourceConfig,
    leadgenId: string,
    pageId?: string,
  ): Promise<LeadOutcome> {
    const client = this.client(source);
    const started = performance.now();
    const got = await client.lead(leadgenId);
    await this.#d.integrationLog.record({
      provider: INTAKE_PROVIDER.meta,
      workspaceId: source.workspaceId,
      direction: 'out',
      kind: 'GET /{leadgen-id}',
      httpStatus: got.httpStatus ?? null,
      outcome: got.ok ? 'ok' : 'error',
      latencyMs: Math.round(performance.now() - started),
      // Only ids: the lead's answers are personal data and are kept on the lead itself.
      payload: { request: { leadgenId }, response: got.ok ? { id: got.value.id } : got },
      ...(got.ok ? {} : { error: got.message }),
      secrets: secretsOf(source),
    });
    if (!got.ok) {
      const message = `Reading lead ${leadgenId} from the Graph API failed: ${got.message}`;
      await this.#d.recordError(source.id, message);
      // Not reached, or a server-side failure or throttling: a later read may succeed. A 4xx
      // (an expired token, a lead that is not there) would fail the same way until someone acts.
      const status = got.httpStatus;
      const temporary = status === undefined || status === 429 || status >= 500;
      return { kind: 'failed', message, ...(temporary ? { temporary: true } : {}) };
    }
    return this.submitLead(source, config, got.value, pageId);
  }

  /** Maps one lead read from Graph and submits it (the webhook and the backfill). */
  async submitLead(
    source: MetaSource,
    config: MetaSourceConfig,
    lead: MetaLead,
    pageId?: string,
  ): Promise<LeadOutcome> {
    const mapped = mapMetaLead(lead, config.fieldMapping);
    const organic = lead.isOrganic === true || (lead.isOrganic === undefined && !lead.adId);
    const test = mapped.dummy || (config.organicToSandbox === true && organic);
    const detail = metaLeadDetail(lead, pageId ?? config.pageId);
    try {
      const r = await this.#d.submit(source, {
        // formResponses ride along: LeadService validates the body as the API's, which takes them.
        lead: { body: mapped.body as IntakeDelivery['lead']['body'], sourceLeadId: lead.id, test },
        detail,
        // Ids and field names only: the answers are personal data and are kept on the lead itself.
        payload: { leadgenId: lead.id, fields: lead.fieldData.map((f) => f.name) },
      });
      return r.outcome === 'duplicate-phone'
        ? { kind: 'duplicate-phone', leadId: r.leadId, livemode: r.livemode }
        : { kind: r.outcome, leadId: r.leadId, livemode: r.livemode };
    } catch (err) {
      // Already on the source and in the log (IntakeService); the next lead of the batch goes on.
      if (!(err instanceof AppError)) throw err;
      return { kind: 'failed', message: err.message, ...(TEMPORARY_REFUSALS.has(err.code) ? { temporary: true } : {}) };
    }
  }
}

function secretsOf(source: MetaSource): string[] {
  return [source.secret.pageAccessToken, source.secret.appSecret, source.secret.verifyToken];
}

/** A refusal's line for the Logs page and the Form page: the issues by path. */
function issueLine(issues: ValidationIssue[], otherwise: string): string {
  return issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ') || otherwise;
}

function summary(outcomes: LeadOutcome[]): string {
  if (outcomes.length === 0) return 'no-leads';
  const kinds = new Set(outcomes.map((o) => o.kind));
  return kinds.size === 1 ? [...kinds][0]! : 'mixed';
}
