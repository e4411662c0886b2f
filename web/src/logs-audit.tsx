import { useCallback, useEffect, useState } from 'react';
import { api, type Schemas, type WorkspaceAccess } from './api.ts';
import { dateTime } from './format.ts';
import { LeadLink } from './logs-lead-link.tsx';

// The Logs page's audit log (/admin/<slug>/logs/audit, owners and admins): who did what, newest first.

type AuditLogPage = Schemas['AdminAuditLog'];
type AuditEvent = AuditLogPage['events'][number];

/** An audit type in words: `webhook_endpoint.secret_rotated` → "Webhook endpoint secret rotated". */
export function auditWords(type: string): string {
  const known: Record<string, string> = {
    'lead.erased': 'Lead deleted',
    'dead_letter.retried': 'Dead-lettered turn retried',
  };
  const words = (known[type] ?? type.replace(/[._]/g, ' ')).trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function AuditLog({ workspace, base }: { workspace: WorkspaceAccess; base: string }) {
  const [events, setEvents] = useState<AuditEvent[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState('');
  const page = useCallback(
    (after?: string) => api<AuditLogPage>('GET', `${base}/audit-log${after ? `?cursor=${after}` : ''}`),
    [base],
  );
  useEffect(() => {
    page().then(
      (r) => {
        setEvents(r.events);
        setCursor(r.nextCursor);
      },
      (e: Error) => setError(e.message),
    );
  }, [page]);
  const more = async () => {
    if (!cursor) return;
    const r = await page(cursor);
    setEvents((e) => [...(e ?? []), ...r.events]);
    setCursor(r.nextCursor);
  };
  return (
    <section aria-labelledby="audit-h">
      <h2 id="audit-h">Audit log</h2>
      <p>Who did what, and when: the operators' actions in the dashboard and the command line's.</p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {!events ? (
        <p className="loading">Loading…</p>
      ) : events.length === 0 ? (
        <p className="empty">No actions yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
              <th scope="col">Subject</th>
            </tr>
          </thead>
          <tbody>
            {events.map((a) => (
              <tr key={a.id}>
                <td>
                  <time dateTime={a.at}>{dateTime(a.at)}</time>
                </td>
                <td>
                  {a.operator ? (
                    <>
                      {a.operator.name} <span className="muted">{a.operator.email}</span>
                    </>
                  ) : (
                    a.actor
                  )}
                </td>
                <td>{auditWords(a.type)}</td>
                <td>
                  {a.subjectIsLead && a.subjectId ? (
                    <LeadLink slug={workspace.slug} leadId={a.subjectId} exists />
                  ) : a.subjectId ? (
                    <code>{a.subjectId}</code>
                  ) : (
                    '—'
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {cursor && (
        <button type="button" onClick={() => void more()}>
          Show older actions
        </button>
      )}
    </section>
  );
}
