import { useCallback, useEffect, useState } from 'react';
import { api, type Schemas } from './api.ts';
import { CopyButton } from './copy.tsx';
import { dateTime } from './format.ts';
import { saveErrorText } from './save-error.ts';

// The Form page's "Publishable keys" section (docs/INTAKE.md, "Embed and publishable keys"): keys
// a site's own form may use in the browser, only to create leads and only from the origins
// listed. Everyone sees the list; owners and admins create (the key shown once), change the
// origins and revoke.

type Key = Schemas['AdminPublishableKeys']['keys'][number];
type Created = Schemas['AdminPublishableKeyCreated']['key'];

const lines = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((o) => o.trim())
    .filter((o) => o !== '');

function KeyRow({ k, base, canEdit, reload }: { k: Key; base: string; canEdit: boolean; reload: () => void }) {
  const [origins, setOrigins] = useState(k.allowedOrigins.join('\n'));
  const [error, setError] = useState('');
  const save = async () => {
    setError('');
    try {
      await api('PUT', `${base}/keys/${k.id}/origins`, { allowedOrigins: lines(origins) });
      reload();
    } catch (e) {
      setError(saveErrorText(e));
    }
  };
  const revoke = async () => {
    if (!confirm(`Revoke ${k.prefix}…? Forms using it stop sending leads.`)) return;
    await api('DELETE', `${base}/keys/${k.id}`).then(reload, (e: Error) => setError(e.message));
  };
  return (
    <li className="question">
      <div className="question-fields">
        <strong>
          <code>{k.prefix}…</code>
        </strong>
        <span>{k.livemode ? 'Live' : 'Sandbox'}</span>
        <span>
          {k.revokedAt
            ? `Revoked ${dateTime(k.revokedAt)}`
            : `Last used ${k.lastUsedAt ? dateTime(k.lastUsedAt) : 'never'}`}
        </span>
        {canEdit && !k.revokedAt ? (
          <>
            <label className="setting">
              Allowed origins, one a line
              <textarea rows={2} value={origins} onChange={(e) => setOrigins(e.target.value)} />
            </label>
            <button type="button" onClick={() => void save()}>
              Save origins
            </button>
            <button type="button" onClick={() => void revoke()}>
              Revoke
            </button>
          </>
        ) : (
          <span>Origins: {k.allowedOrigins.join(', ')}</span>
        )}
        {error && (
          <span role="alert" className="error">
            {error}
          </span>
        )}
      </div>
    </li>
  );
}

export function PublishableKeysSection({ base, canEdit }: { base: string; canEdit: boolean }) {
  const [keys, setKeys] = useState<Key[] | null>(null);
  const [created, setCreated] = useState<Created | null>(null);
  const [origins, setOrigins] = useState('');
  const [sandbox, setSandbox] = useState(false);
  const [error, setError] = useState('');
  const load = useCallback(() => {
    api<Schemas['AdminPublishableKeys']>('GET', `${base}/keys`).then(
      (r) => setKeys(r.keys),
      (e: Error) => setError(e.message),
    );
  }, [base]);
  useEffect(load, [load]);
  const create = async (e: React.FormEvent) => {
    e.preventDefault();
    setError('');
    try {
      const r = await api<Schemas['AdminPublishableKeyCreated']>('POST', `${base}/keys`, {
        allowedOrigins: lines(origins),
        sandbox,
      });
      setCreated(r.key);
      setOrigins('');
      load();
    } catch (err) {
      setError(saveErrorText(err));
    }
  };
  return (
    <section aria-labelledby="pub-keys-h" className="intake-section">
      <h2 id="pub-keys-h">Publishable keys</h2>
      <p>
        For a form you build yourself: a <code>li_pub_…</code> key may sit in a web page, because it can only create
        leads, and only from the sites listed. Never put a secret key (<code>li_live_…</code>) in a page.
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {created && (
        <div className="once" role="status">
          <p>
            The new key, shown this once: <code>{created.key}</code>{' '}
            <CopyButton text={created.key} label="Copy the publishable key" />
          </p>
        </div>
      )}
      {keys === null ? (
        <p className="loading">Loading…</p>
      ) : keys.length === 0 ? (
        <p className="empty">No publishable keys yet.</p>
      ) : (
        <ul className="questions">
          {keys.map((k) => (
            <KeyRow key={`${k.id}:${k.allowedOrigins.join(',')}`} k={k} base={base} canEdit={canEdit} reload={load} />
          ))}
        </ul>
      )}
      {canEdit && (
        <form className="agent-form" onSubmit={create}>
          <label className="setting">
            Allowed origins of the new key, one a line (https://www.example.com)
            <textarea rows={2} value={origins} onChange={(e) => setOrigins(e.target.value)} required />
          </label>
          <label>
            <input type="checkbox" checked={sandbox} onChange={(e) => setSandbox(e.target.checked)} /> Sandbox key (test
            leads)
          </label>
          <button type="submit">Create publishable key</button>
        </form>
      )}
    </section>
  );
}
