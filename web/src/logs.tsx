import { useCallback, useEffect, useState } from 'react';
import { api, type Schemas, type WorkspaceAccess } from './api.ts';
import { dateTime } from './format.ts';
import { useLatest, useLiveRefresh } from './live.ts';
import { Link } from './link.tsx';
import { useQueryState } from './nav.ts';

// The Logs page (docs/DASHBOARD.md, "Logs, dead letters and the audit log"): three sub-pages,
// /admin/<slug>/logs (the integration log, live), /logs/dead-letters (Retry one or all) and
// /logs/audit (owners and admins). The API checks every permission again. The sub-page is in the
// path and the integration log's filters in the query (?provider=…&errors=true&leadId=…), so a
// reload or a shared link shows the same entries.

type IntegrationLogPage = Schemas['AdminIntegrationLog'];
type LogEntry = IntegrationLogPage['entries'][number];
type DeadLetter = Schemas['AdminDeadLetters']['deadLetters'][number];
type AuditLogPage = Schemas['AdminAuditLog'];
type AuditEvent = AuditLogPage['events'][number];

const PROVIDERS = ['vapi', 'twilio', 'meta', 'llm', 'calcom'];
const TABS = [
  { sub: undefined, label: 'Integration log', permission: 'logs.read' },
  { sub: 'dead-letters', label: 'Dead letters', permission: 'logs.read' },
  { sub: 'audit', label: 'Audit log', permission: 'audit.read' },
] as const;

function LeadLink({
  slug,
  leadId,
  exists,
  name,
}: {
  slug: string;
  leadId: string | null;
  exists: boolean;
  name?: string;
}) {
  if (!leadId) return <>—</>;
  if (!exists) return <span title={leadId}>Deleted lead</span>;
  return <Link to={`/admin/${slug}/leads/${leadId}`}>{name ?? `Lead ${leadId.slice(0, 8)}`}</Link>;
}

/** An audit type in words: `webhook_endpoint.secret_rotated` → "Webhook endpoint secret rotated". */
export function auditWords(type: string): string {
  const known: Record<string, string> = {
    'lead.erased': 'Lead deleted',
    'dead_letter.retried': 'Dead-lettered turn retried',
  };
  const words = (known[type] ?? type.replace(/[._]/g, ' ')).trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const INTEGRATION = ['integration'];

function IntegrationLog({ workspace, base }: { workspace: WorkspaceAccess; base: string }) {
  const [params, setParams] = useQueryState();
  const provider = PROVIDERS.includes(params.get('provider') ?? '') ? params.get('provider')! : '';
  const errorsOnly = params.get('errors') === 'true';
  const leadId = params.get('leadId') ?? '';
  // A choice adds a history entry; typing an id adds one when it starts, then changes it.
  const setProvider = (p: string) => setParams({ provider: p });
  const setErrorsOnly = (on: boolean) => setParams({ errors: on });
  const setLeadId = (id: string) => setParams({ leadId: id }, { replace: leadId !== '' && id !== '' });
  const [entries, setEntries] = useState<LogEntry[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState('');
  const query = useCallback(
    (after?: string) => {
      const p = new URLSearchParams();
      if (provider) p.set('provider', provider);
      if (errorsOnly) p.set('errors', 'true');
      if (/^[0-9a-f-]{36}$/i.test(leadId.trim())) p.set('leadId', leadId.trim());
      if (after) p.set('cursor', after);
      return api<IntegrationLogPage>('GET', `${base}/integration-log?${p}`);
    },
    [base, provider, errorsOnly, leadId],
  );
  const latest = useLatest();
  const refresh = useCallback(() => {
    const current = latest.begin();
    query().then(
      (r) => {
        if (!current()) return;
        setEntries(r.entries);
        setCursor(r.nextCursor);
        setError('');
      },
      (e: Error) => {
        if (current()) setError(e.message);
      },
    );
  }, [query, latest]);
  useEffect(refresh, [refresh]);
  // Live: each new entry (one notification per statement) refetches the first page.
  useLiveRefresh(workspace.slug, refresh, INTEGRATION);
  const more = async () => {
    if (!cursor) return;
    const current = latest.join();
    const r = await query(cursor);
    if (!current()) return;
    setEntries((e) => [...(e ?? []), ...r.entries]);
    setCursor(r.nextCursor);
  };
  return (
    <section aria-labelledby="integration-h">
      <h2 id="integration-h">Integration log</h2>
      <p>
        Every request sent to a provider and every message a provider sent, newest first. Secrets are masked as they
        were stored.
      </p>
      <div className="toolbar">
        <label>
          Provider{' '}
          <select value={provider} onChange={(e) => setProvider(e.target.value)}>
            <option value="">All providers</option>
            {PROVIDERS.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label>
          <input type="checkbox" checked={errorsOnly} onChange={(e) => setErrorsOnly(e.target.checked)} /> Errors only
        </label>
        <label>
          Lead id{' '}
          <input
            type="search"
            value={leadId}
            size={38}
            placeholder="Any lead"
            onChange={(e) => setLeadId(e.target.value)}
          />
        </label>
      </div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {!entries ? (
        <p className="loading">Loading…</p>
      ) : entries.length === 0 ? (
        <p className="empty">No entries.</p>
      ) : (
        <table className="integration-log">
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Provider</th>
              <th scope="col">Direction</th>
              <th scope="col">Operation</th>
              <th scope="col">HTTP status</th>
              <th scope="col">Latency</th>
              <th scope="col">Error</th>
              <th scope="col">Lead</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.id} className={e.failed ? 'row-failed' : undefined}>
                <td>
                  <time dateTime={e.at}>{dateTime(e.at)}</time>
                </td>
                <td>{e.provider}</td>
                <td>{e.direction === 'out' ? 'Sent' : 'Received'}</td>
                <td>
                  <code>{e.operation}</code>
                  {e.outcome && <span className="badge">{e.outcome}</span>}
                  <details>
                    <summary>Payload</summary>
                    <pre className="payload">
                      {e.payload}
                      {e.payloadChars > e.payload.length ? `\n… (${e.payloadChars} characters in all)` : ''}
                    </pre>
                  </details>
                </td>
                <td>{e.httpStatus ?? '—'}</td>
                <td>{e.latencyMs === null ? '—' : `${e.latencyMs} ms`}</td>
                <td>
                  {e.error ? (
                    <span className="error">{e.error}</span>
                  ) : e.failed ? (
                    <span className="error">Failed</span>
                  ) : (
                    '—'
                  )}
                </td>
                <td>
                  <LeadLink slug={workspace.slug} leadId={e.leadId} exists={e.leadExists} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {cursor && (
        <button type="button" onClick={() => void more()}>
          Show older entries
        </button>
      )}
    </section>
  );
}

function DeadLetters({ workspace, base }: { workspace: WorkspaceAccess; base: string }) {
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

function AuditLog({ workspace, base }: { workspace: WorkspaceAccess; base: string }) {
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

export function LogsPage({ workspace, subpath }: { workspace: WorkspaceAccess; subpath: string | undefined }) {
  const base = `/api/admin/workspaces/${encodeURIComponent(workspace.slug)}`;
  const tabs = TABS.filter((t) => workspace.permissions.includes(t.permission));
  const current = tabs.find((t) => t.sub === subpath) ?? tabs[0]!;
  return (
    <main className="logs">
      <h1>Logs</h1>
      <nav aria-label="Logs" className="tabs">
        {tabs.map((t) => (
          <Link
            key={t.label}
            className="tab"
            current={t === current}
            to={`/admin/${workspace.slug}/logs${t.sub ? `/${t.sub}` : ''}`}
          >
            {t.label}
          </Link>
        ))}
      </nav>
      {current.sub === undefined && <IntegrationLog workspace={workspace} base={base} />}
      {current.sub === 'dead-letters' && <DeadLetters workspace={workspace} base={base} />}
      {current.sub === 'audit' && <AuditLog workspace={workspace} base={base} />}
    </main>
  );
}
