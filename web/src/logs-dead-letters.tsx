import { useCallback, useEffect, useState } from 'react';
import { api, type Schemas, type WorkspaceAccess } from './api.ts';
import { dateTime } from './format.ts';
import { LeadLink } from './logs-lead-link.tsx';

// The Logs page's dead letters (/admin/<slug>/logs/dead-letters): agent turns that failed for good,
// with Retry one or all for those who may (jobs.retry; the API checks it again).

type DeadLetter = Schemas['AdminDeadLetters']['deadLetters'][number];

export function DeadLetters({ workspace, base }: { workspace: WorkspaceAccess; base: string }) {
  const [rows, setRows] = useState<DeadLetter[] | null>(null);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const canRetry = workspace.permissions.includes('jobs.retry');
  const load = useCallback(() => {
    api<Schemas['AdminDeadLetters']>('GET', `${base}/dead-letters`).then(
      (r) => setRows(r.deadLetters),
      (e: Error) => setError(e.message),
    );
  }, [base]);
  useEffect(load, [load]);
  const retry = async (id?: string) => {
    if (!id && !confirm(`Retry all ${rows?.length ?? 0} dead-lettered turns of this workspace?`)) return;
    setError('');
    try {
      const r = await api<Schemas['AdminDeadLettersRetried']>(
        'POST',
        id ? `${base}/dead-letters/${id}/retry` : `${base}/dead-letters/retry`,
      );
      setNotice(`Sent ${r.retried} turn(s) back to the queue.`);
    } catch (e) {
      setError((e as Error).message);
    }
    load();
  };
  return (
    <section aria-labelledby="dead-h">
      <h2 id="dead-h">Dead letters</h2>
      <p>
        Agent turns that failed after their retries, or in a way retrying could not fix (for example a provider refused
        the workspace's credentials). Fix the cause, then Retry: the turn resumes where it stopped.
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <p role="status" className="notice">
        {notice}
      </p>
      <div className="toolbar">
        <button type="button" onClick={load}>
          Refresh
        </button>
        {canRetry && (rows?.length ?? 0) > 0 && (
          <button type="button" onClick={() => void retry()}>
            Retry all
          </button>
        )}
      </div>
      {!rows ? (
        <p className="loading">Loading…</p>
      ) : rows.length === 0 ? (
        <p className="empty">No dead-lettered turns.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Lead</th>
              <th scope="col">Failed</th>
              <th scope="col">Attempts</th>
              <th scope="col">Reason</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((d) => (
              <tr key={d.id}>
                <td>
                  <LeadLink slug={workspace.slug} leadId={d.leadId} exists name={d.leadName} />
                </td>
                <td>
                  <time dateTime={d.deadAt}>{dateTime(d.deadAt)}</time>
                </td>
                <td>{d.attempts}</td>
                <td className="reason">{d.reason}</td>
                <td>
                  {canRetry && (
                    <button
                      type="button"
                      onClick={() => void retry(d.id)}
                      aria-label={`Retry the turn of ${d.leadName}`}
                    >
                      Retry
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
