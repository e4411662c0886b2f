import type { Queryable } from '../../db/pool.ts';
import { findLeadBySourceLeadId } from '../lead-source-queries.ts';
import type { MetaIntakeService, MetaSource } from './meta-intake-service.ts';
import { readMetaConfig } from './meta-source-settings.ts';

// `leadintake source backfill <source-id> [--since ISO]`: after a gap (the server was down, the
// Page token had expired, Meta gave up on the webhook) reads each of the source's forms through
// `GET /{form-id}/leads`, page by page, and submits the leads the source has not made yet. A lead
// it already made is skipped before anything is submitted, so a backfill run twice, or over a
// period the webhook covered, makes nothing twice and logs nothing for it.

export interface BackfillReport {
  forms: number;
  read: number;
  created: number;
  /** Already a lead of this source (webhook or an earlier backfill). */
  known: number;
  /** Another lead of the workspace has the phone (the API's 409). */
  duplicatePhone: number;
  failed: number;
  /** The Graph API's failure that stopped the run, if one did (also on the source's last_error). */
  error?: string;
}

/** Bound on the pages of one form, so a cursor that never ends cannot keep the command running. */
const MAX_PAGES = 1000;

export async function backfillMetaSource(
  deps: { meta: MetaIntakeService; db: Queryable; recordError(sourceId: string, message: string): Promise<void> },
  source: MetaSource,
  opts: { since?: Date; formIds?: string[]; pageSize?: number } = {},
): Promise<BackfillReport> {
  const config = readMetaConfig(source.config);
  const formIds = opts.formIds?.length ? opts.formIds : (config.formIds ?? []);
  const report: BackfillReport = { forms: formIds.length, read: 0, created: 0, known: 0, duplicatePhone: 0, failed: 0 };
  const client = deps.meta.client(source);
  for (const formId of formIds) {
    let after: string | undefined;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const got = await client.formLeads(formId, {
        ...(opts.since ? { since: opts.since } : {}),
        ...(after ? { after } : {}),
        ...(opts.pageSize ? { limit: opts.pageSize } : {}),
      });
      if (!got.ok) {
        report.error = `Reading the leads of form ${formId} from the Graph API failed: ${got.message}`;
        await deps.recordError(source.id, report.error);
        return report;
      }
      for (const lead of got.value.leads) {
        report.read += 1;
        if (await findLeadBySourceLeadId(deps.db, source.id, lead.id)) {
          report.known += 1;
          continue;
        }
        const outcome = await deps.meta.submitLead(source, config, lead);
        if (outcome.kind === 'created') report.created += 1;
        else if (outcome.kind === 'duplicate') report.known += 1;
        else if (outcome.kind === 'duplicate-phone') report.duplicatePhone += 1;
        else report.failed += 1;
      }
      after = got.value.after;
      if (!after) break;
    }
  }
  return report;
}
