import { useCallback, useEffect, useState } from 'react';
import { api, type Schemas, type WorkspaceAccess } from './api.ts';
import { dateTime } from './format.ts';
import { useLatest, useLiveRefresh } from './live.ts';
import { Link } from './link.tsx';
import { AuditLog } from './logs-audit.tsx';
import { DeadLetters } from './logs-dead-letters.tsx';
import { LeadLink } from './logs-lead-link.tsx';
import { useQueryState } from './nav.ts';

// The Logs page (docs/DASHBOARD.md, "Logs, dead letters and the audit log"): three sub-pages,
// /admin/<slug>/logs (the integration log, live), /logs/dead-letters (Retry one or all) and
// /logs/audit (owners and admins). The API checks every permission again. The sub-page is in the
// path and the integration log's filters in the query (?provider=…&errors=true&leadId=…), so a
// reload or a shared link shows the same entries.

type IntegrationLogPage = Schemas['AdminIntegrationLog'];
type LogEntry = IntegrationLogPage['entries'][number];

const PROVIDERS = ['vapi', 'twilio', 'meta', 'llm', 'calcom'];
const TABS = [
  { sub: undefined, label: 'Integration log', permission: 'logs.read' },
  { sub: 'dead-letters', label: 'Dead letters', permission: 'logs.read' },
  { sub: 'audit', label: 'Audit log', permission: 'audit.read' },
] as const;
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
