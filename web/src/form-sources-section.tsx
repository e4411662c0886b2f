import { useCallback, useEffect, useState } from 'react';
import { api, type Schemas } from './api.ts';
import { CopyButton } from './copy.tsx';
import { dateTime } from './format.ts';
import { MetaMappingEditor } from './meta-mapping-editor.tsx';
import { saveErrorText } from './save-error.ts';

// The Form page's "Connected sources" section (docs/INTAKE.md, "Generic webhooks", "Google lead
// forms", "Meta Lead Ads"): each source with the URL to paste, its status and last lead (or last
// error). Owners and admins connect Meta (a Page's token, the app secret, a verify token),
// Google (the webhook URL and key go into Google Ads) or a generic webhook, rotate a secret and
// disconnect. A secret is shown once; Meta's are typed here and never shown again.

type Source = Schemas['AdminLeadSources']['sources'][number];
type Created = Schemas['AdminLeadSourceCreated'];

const KINDS = { webhook: 'Generic webhook', google: 'Google lead form', meta: 'Meta Lead Ads' } as const;
const STATUS = {
  waiting: 'Waiting for the first lead',
  active: 'Receiving leads',
  failing: 'Failing',
  revoked: 'Disconnected',
} as const;

/** A flat payload the generic webhook maps with its defaults (docs/INTAKE.md, "Generic webhooks"). */
const SAMPLE = JSON.stringify(
  { id: 'sub_123', name: 'Sam Sample', phone: '+44 20 7946 0958', email: 'sam@example.com', goal: 'A quote' },
  null,
  2,
);

function SourceRow({ s, base, canEdit, reload }: { s: Source; base: string; canEdit: boolean; reload: () => void }) {
  const [secret, setSecret] = useState('');
  const [error, setError] = useState('');
  const rotate = async () => {
    try {
      setSecret((await api<{ secret: string }>('POST', `${base}/sources/${s.id}/rotate-secret`, {})).secret);
    } catch (e) {
      setError(saveErrorText(e));
    }
  };
  const revoke = async () => {
    if (!confirm(`Disconnect ${s.name}? Its URL stops accepting leads.`)) return;
    await api('DELETE', `${base}/sources/${s.id}`).then(reload, (e: Error) => setError(e.message));
  };
  return (
    <li className="question">
      <div className="question-fields">
        <strong>{s.name}</strong>
        <span>{KINDS[s.kind]}</span>
        <span className={s.status === 'failing' ? 'error' : undefined}>{STATUS[s.status]}</span>
        {s.sandbox && <span>Sandbox</span>}
        <span>Last lead: {s.lastLeadAt ? dateTime(s.lastLeadAt) : 'none yet'}</span>
        {s.lastError && s.lastErrorAt && (
          <span>
            Last error ({dateTime(s.lastErrorAt)}): {s.lastError}
          </span>
        )}
        {!s.revokedAt && (
          <span className="intake-url">
            URL <code>{s.url}</code> <CopyButton text={s.url} label={`Copy the URL of ${s.name}`} />
          </span>
        )}
        {secret && (
          <span className="once" role="status">
            New secret, shown this once: <code>{secret}</code>
          </span>
        )}
        {canEdit && !s.revokedAt && (
          <span className="toolbar">
            {s.kind !== 'meta' && (
              <button type="button" onClick={() => void rotate()}>
                New secret
              </button>
            )}
            <button type="button" onClick={() => void revoke()}>
              Disconnect
            </button>
          </span>
        )}
        {error && (
          <span role="alert" className="error">
            {error}
          </span>
        )}
        {s.meta && !s.revokedAt && (
          <details>
            <summary>Field mapping</summary>
            <MetaMappingEditor
              meta={s.meta}
              sourceName={s.name}
              url={`${base}/sources/${s.id}`}
              // The form builder's questions (…/form beside …/intake): the targets a Meta field can answer.
              formUrl={base.replace(/\/intake$/, '/form')}
              canEdit={canEdit}
              saved={reload}
            />
          </details>
        )}
      </div>
    </li>
  );
}

export function SourcesSection({ base, canEdit }: { base: string; canEdit: boolean }) {
  const [sources, setSources] = useState<Source[] | null>(null);
  const [kind, setKind] = useState<keyof typeof KINDS>('webhook');
  const [created, setCreated] = useState<Created | null>(null);
  const [error, setError] = useState('');
  const load = useCallback(() => {
    api<Schemas['AdminLeadSources']>('GET', `${base}/sources`).then(
      (r) => setSources(r.sources),
      (e: Error) => setError(e.message),
    );
  }, [base]);
  useEffect(load, [load]);
  const connect = async (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    setError('');
    // Kept: React clears currentTarget once the handler awaits.
    const form = e.currentTarget;
    const f = new FormData(form);
    const text = (k: string) => String(f.get(k) ?? '').trim();
    const body =
      kind === 'meta'
        ? {
            kind,
            name: text('name'),
            pageAccessToken: text('pageAccessToken'),
            appSecret: text('appSecret'),
            verifyToken: text('verifyToken'),
            ...(text('pageId') ? { pageId: text('pageId') } : {}),
          }
        : {
            kind,
            name: text('name'),
            sandbox: f.get('sandbox') === 'on',
            ...(text('secret') ? { secret: text('secret') } : {}),
          };
    try {
      setCreated(await api<Created>('POST', `${base}/sources`, body));
      form.reset();
      load();
    } catch (err) {
      setError(saveErrorText(err));
    }
  };
  return (
    <section aria-labelledby="sources-h" className="intake-section">
      <h2 id="sources-h">Connected sources</h2>
      <p>
        Lead ads and other tools that send leads straight in. Their leads carry the source on the lead and in Analytics.
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {created && (
        <div className="once" role="status">
          <p>
            Connected {created.source.name}. Paste this URL into {KINDS[created.source.kind]}:{' '}
            <code>{created.source.url}</code>
          </p>
          {created.secret && (
            <p>
              Its {created.source.kind === 'google' ? 'key' : 'secret'}
              {', shown this once: '}
              <code>{created.secret}</code> <CopyButton text={created.secret} label="Copy the secret" />
            </p>
          )}
        </div>
      )}
      {sources === null ? (
        <p className="loading">Loading…</p>
      ) : sources.length === 0 ? (
        <p className="empty">No connected sources yet.</p>
      ) : (
        <ul className="questions">
          {sources.map((s) => (
            <SourceRow key={s.id} s={s} base={base} canEdit={canEdit} reload={load} />
          ))}
        </ul>
      )}
      <details>
        <summary>What a generic webhook sends</summary>
        <p>
          A POST of JSON to the source's URL, signed: <code>X-Leadintake-Signature: sha256=</code> and the hex
          HMAC-SHA256 of the body with the secret (or <code>Authorization: Bearer</code> and the secret, for tools that
          cannot sign). A flat payload needs no mapping:
        </p>
        <pre role="region" aria-label="Sample webhook payload" tabIndex={0}>
          {SAMPLE}
        </pre>
      </details>
      {canEdit && (
        <form className="agent-form" onSubmit={connect}>
          <h3>Connect a source</h3>
          <label className="setting">
            Kind
            <select value={kind} onChange={(e) => setKind(e.target.value as keyof typeof KINDS)}>
              {Object.entries(KINDS).map(([v, label]) => (
                <option key={v} value={v}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <label className="setting">
            Name
            <input name="name" required maxLength={100} />
          </label>
          {kind === 'meta' ? (
            <>
              <label className="setting">
                Page access token (with leads_retrieval)
                <input name="pageAccessToken" type="password" autoComplete="off" required />
              </label>
              <label className="setting">
                App secret
                <input name="appSecret" type="password" autoComplete="off" required />
              </label>
              <label className="setting">
                Verify token (as typed into the app's webhook settings)
                <input name="verifyToken" autoComplete="off" required />
              </label>
              <label className="setting">
                Page id (optional)
                <input name="pageId" inputMode="numeric" />
              </label>
            </>
          ) : (
            <>
              {kind === 'google' && (
                <label className="setting">
                  Key typed into Google Ads (optional: one is made up otherwise)
                  <input name="secret" autoComplete="off" minLength={8} />
                </label>
              )}
              <label>
                <input name="sandbox" type="checkbox" /> Sandbox: every lead of this source is a test lead
              </label>
            </>
          )}
          <button type="submit">Connect</button>
        </form>
      )}
    </section>
  );
}
