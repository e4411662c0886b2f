import type { Queryable } from '../db/pool.ts';
import { StatementBatcher } from '../db/statement-batcher.ts';
import type { Logger } from '../shared/logger.ts';
import { storedColumns, type IntegrationEventInput } from './integration-log.ts';

// The integration log's entries of a busy path (every send and every delivery status of the
// WhatsApp channel) written together: the entries submitted while the previous insert runs are
// inserted by the next one, in the order they were submitted (src/db/statement-batcher.ts). Each
// record() still resolves only once its entry is committed, so a caller that goes on afterwards
// (a turn that completes, a webhook that is answered) leaves its entry behind it, as before.

const COLUMNS = ['uuid', 'uuid', 'text', 'text', 'text', 'int', 'text', 'text', 'timestamptz', 'int', 'text'] as const;

export class IntegrationLogWriter {
  readonly #log: Logger;
  readonly #batch: StatementBatcher<unknown[], void>;

  constructor(db: Queryable, log: Logger) {
    this.#log = log;
    this.#batch = new StatementBatcher({
      run: async (rows) => {
        // One array per column, unnested in step: the rows keep their order (and so their ids).
        const values = COLUMNS.map((_, c) => rows.map((r) => r[c]));
        await db.query({
          name: 'record-integration-events',
          text: `INSERT INTO integration_events (workspace_id, lead_id, provider,
                 direction, kind, http_status, outcome, payload, created_at, latency_ms, error)
                 SELECT w, l, p, d, k, h, o, pl::jsonb, COALESCE(a, now()), ms, e
                   FROM unnest(${COLUMNS.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})
                        AS r(w, l, p, d, k, h, o, pl, a, ms, e)`,
          values,
        });
        return rows.map(() => undefined);
      },
    });
  }

  /** Stores the entry; a failure to write it becomes a warning line (the exchange already happened). */
  async record(entry: IntegrationEventInput): Promise<void> {
    try {
      await this.#batch.submit(storedColumns(entry));
    } catch (err) {
      this.#log.warn(
        { err, provider: entry.provider, kind: entry.kind, workspaceId: entry.workspaceId },
        'integration log entry not written',
      );
    }
  }
}
