import { useCallback, useEffect, useRef, useState } from 'react';
import { api, type Schemas, type WorkspaceAccess } from './api.ts';
import { CopyButton } from './copy.tsx';
import { dateTime } from './format.ts';

// The API keys page (docs/DASHBOARD.md, "Providers, API keys and team"): the workspace's live and
// sandbox keys, Create (the key shown once, in a dialog), Revoke after a confirmation. The API
// holds only hashes: a key that was not copied at creation cannot be shown again.

type Keys = Schemas['AdminApiKeys'];
type Key = Keys['keys'][number];

function NewKeyDialog({ created, onClose }: { created: { key: string; prefix: string }; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => ref.current?.showModal(), []);
  return (
    <dialog ref={ref} aria-labelledby="newkey-h" onClose={onClose} className="secret">
      <h2 id="newkey-h">New API key</h2>
      <p className="warning">
        <strong>Copy it now: it will not be shown again.</strong> Only its hash is stored; if it is lost, create another
        key and revoke this one.
      </p>
      <label>
        Key <input readOnly value={created.key} size={56} onFocus={(e) => e.currentTarget.select()} />
      </label>
      <div className="actions">
        <CopyButton text={created.key} label="Copy the new API key" />
        <button type="button" onClick={() => ref.current?.close()}>
          Done
        </button>
      </div>
    </dialog>
  );
}

function ConfirmRevoke({
  k,
  ttl,
  onConfirm,
  onClose,
}: {
  k: Key;
  ttl: number;
  onConfirm: () => void;
  onClose: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => ref.current?.showModal(), []);
  return (
    <dialog ref={ref} aria-labelledby="revoke-h" onClose={onClose} className="secret">
      <h2 id="revoke-h">Revoke {k.name}?</h2>
      <p>
        Requests with the key {k.prefix}… will answer 401 within {ttl} seconds (the key cache), at once on this server.
        This cannot be undone.
      </p>
      <div className="actions">
        <button
          type="button"
          className="danger"
          onClick={() => {
            onConfirm();
            ref.current?.close();
          }}
        >
          Revoke key
        </button>
        <button type="button" onClick={() => ref.current?.close()}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}

export function KeysPage({ workspace }: { workspace: WorkspaceAccess }) {
  const base = `/api/admin/workspaces/${encodeURIComponent(workspace.slug)}/keys`;
  const [keys, setKeys] = useState<Key[] | null>(null);
  const [ttl, setTtl] = useState(5);
  const [created, setCreated] = useState<{ key: string; prefix: string } | null>(null);
  const [revoking, setRevoking] = useState<Key | null>(null);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const load = useCallback(() => {
    api<Keys>('GET', base).then(
      (r) => {
        setKeys(r.keys);
        setTtl(r.cacheTtlSeconds);
      },
      (e: Error) => setError(e.message),
    );
  }, [base]);
  useEffect(load, [load]);

  const create = async (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    setError('');
    try {
      const limit = String(f.get('hourlyLimit') ?? '').trim();
      const r = await api<Schemas['AdminApiKeyCreated']>('POST', base, {
        name: f.get('name'),
        sandbox: f.get('mode') === 'sandbox',
        ...(limit ? { hourlyLimit: Number(limit) } : {}),
      });
      form.reset();
      setCreated(r.key);
      setNotice('Key created.');
      load();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const revoke = async (k: Key) => {
    setError('');
    try {
      await api('DELETE', `${base}/${k.id}`);
      setNotice(`Key ${k.name} revoked.`);
      load();
    } catch (err) {
      setError((err as Error).message);
    }
  };

  return (
    <main className="keys">
      <h1>API keys</h1>
      <p>
        Your back end sends leads with these keys (never put one in a browser). Live keys (<code>li_live_…</code>)
        contact leads; sandbox keys (<code>li_test_…</code>) only simulate. "Last used" is recorded at most once a
        minute.
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <p role="status" className="notice">
        {notice}
      </p>
      {created && <NewKeyDialog created={created} onClose={() => setCreated(null)} />}
      {revoking && (
        <ConfirmRevoke
          k={revoking}
          ttl={ttl}
          onConfirm={() => void revoke(revoking)}
          onClose={() => setRevoking(null)}
        />
      )}
      <section aria-labelledby="create-h">
        <h2 id="create-h">Create a key</h2>
        <form className="add-endpoint" onSubmit={create}>
          <label>
            Name <input name="name" required maxLength={100} placeholder="Website form" />
          </label>
          <fieldset>
            <legend>Mode</legend>
            <label>
              <input type="radio" name="mode" value="live" defaultChecked /> Live
            </label>
            <label>
              <input type="radio" name="mode" value="sandbox" /> Sandbox
            </label>
          </fieldset>
          <label>
            Hourly limit (optional) <input name="hourlyLimit" type="number" min={1} />
          </label>
          <button type="submit">Create key</button>
        </form>
      </section>
      <section aria-labelledby="keys-h">
        <h2 id="keys-h">Keys</h2>
        <p>
          Revoked keys answer 401 on the public API within {ttl} seconds (API_KEY_CACHE_TTL_MS: other servers keep a
          found key that long).
        </p>
        {!keys ? (
          <p className="loading">Loading…</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Mode</th>
                <th scope="col">Hourly limit</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <tr key={k.id}>
                  <td>{k.name}</td>
                  <td>
                    <code>{k.prefix}…</code>
                  </td>
                  <td>{k.livemode ? 'Live' : 'Sandbox'}</td>
                  <td>{k.hourlyLimit}</td>
                  <td>{dateTime(k.createdAt)}</td>
                  <td>{k.lastUsedAt ? dateTime(k.lastUsedAt) : 'Never'}</td>
                  <td>{k.revokedAt ? `Revoked ${dateTime(k.revokedAt)}` : 'Active'}</td>
                  <td>
                    {!k.revokedAt && (
                      <button
                        type="button"
                        className="danger"
                        onClick={() => setRevoking(k)}
                        aria-label={`Revoke ${k.name} (${k.prefix}…)`}
                      >
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </main>
  );
}
