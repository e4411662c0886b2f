import { useCallback, useEffect, useRef, useState } from 'react';
import { usePageActions } from './page-actions.ts';
import { api, type Schemas, type WorkspaceAccess } from './api.ts';
import { dateTime } from './format.ts';

// The Webhooks page (docs/DASHBOARD.md, "Webhooks"): the workspace's outbound webhook endpoints,
// for owners and admins (the API refuses everyone else). The signing secret is shown once, in a
// dialog, right after Add or Rotate secret; the API never returns it again.

type Endpoints = Schemas['AdminWebhookEndpoints'];
type Endpoint = Endpoints['endpoints'][number];
type Deliveries = Schemas['AdminWebhookDeliveries'];
type Delivery = Deliveries['deliveries'][number];

function SecretDialog({ secret, onClose }: { secret: string; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [copied, setCopied] = useState(false);
  useEffect(() => ref.current?.showModal(), []);
  return (
    <dialog ref={ref} aria-labelledby="secret-h" onClose={onClose} className="secret">
      <h2 id="secret-h">Signing secret</h2>
      <p>Copy it now: it is shown this once. Receivers verify each message's signature with it.</p>
      <label>
        Secret <input readOnly value={secret} size={48} onFocus={(e) => e.currentTarget.select()} />
      </label>
      <p role="status" className="notice">
        {copied ? 'Copied.' : ''}
      </p>
      <div className="actions">
        <button
          type="button"
          onClick={() =>
            void navigator.clipboard?.writeText(secret).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
        >
          Copy
        </button>
        <button type="button" onClick={() => ref.current?.close()}>
          Done
        </button>
      </div>
    </dialog>
  );
}

function Deliveries({ base, endpoint, onError }: { base: string; endpoint: Endpoint; onError: (m: string) => void }) {
  const [rows, setRows] = useState<Delivery[] | null>(null);
  const load = useCallback(() => {
    api<Deliveries>('GET', `${base}/${endpoint.id}/deliveries`).then(
      (r) => setRows(r.deliveries),
      (e: Error) => onError(e.message),
    );
  }, [base, endpoint.id, onError]);
  useEffect(load, [load]);
  const replay = async (deliveryId?: string) => {
    try {
      await api('POST', `${base}/${endpoint.id}/replay`, deliveryId ? { deliveryId } : {});
      load();
    } catch (e) {
      onError((e as Error).message);
    }
  };
  if (!rows) return <p className="loading">Loading deliveries…</p>;
  return (
    <section aria-label={`Deliveries to ${endpoint.url}`}>
      <div className="toolbar">
        <button type="button" onClick={load}>
          Refresh deliveries
        </button>
        {rows.some((d) => d.status === 'failed') && (
          <button type="button" onClick={() => void replay()}>
            Replay all failed
          </button>
        )}
      </div>
      {rows.length === 0 ? (
        <p className="empty">No deliveries yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((d) => (
              <tr key={d.deliveryId}>
                <td>{d.eventType}</td>
                <td>
                  <span className="badge">{d.status}</span>
                </td>
                <td>
                  <ol className="attempts">
                    {d.attempts.map((a, i) => (
                      <li key={i}>
                        <time dateTime={a.at}>{dateTime(a.at)}</time> {a.statusCode ?? a.outcome} · {a.latencyMs}
                        {' ms '}
                        {a.response && <code>{a.response.slice(0, 120)}</code>}
                      </li>
                    ))}
                  </ol>
                </td>
                {/* Only a failed delivery can be sent again (the service's rule). */}
                <td>
                  {d.status === 'failed' && (
                    <button
                      type="button"
                      onClick={() => void replay(d.deliveryId)}
                      aria-label={`Replay delivery ${d.deliveryId} (${d.eventType})`}
                    >
                      Replay
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

export function WebhooksPage({ workspace }: { workspace: WorkspaceAccess }) {
  const base = `/api/admin/workspaces/${encodeURIComponent(workspace.slug)}/webhooks`;
  const [endpoints, setEndpoints] = useState<Endpoint[] | null>(null);
  const [eventTypes, setEventTypes] = useState<string[]>([]);
  const [secret, setSecret] = useState<string | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: setError is a stable state setter
  const load = useCallback(() => {
    api<Endpoints>('GET', base).then(
      (r) => {
        setEndpoints(r.endpoints);
        setEventTypes(r.eventTypes);
      },
      (e: Error) => setError(e.message),
    );
  }, [base]);
  useEffect(load, [load]);

  const { error, notice, setError, run } = usePageActions(load);
  const add = async (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    await run(
      null,
      async () => {
        const r = await api<Schemas['AdminWebhookEndpointAdded']>('POST', base, {
          url: f.get('url'),
          eventTypes: f.getAll('eventTypes'),
        });
        form.reset();
        setSecret(r.secret);
      },
      'Endpoint added.',
    );
  };

  return (
    <main className="webhooks">
      <h1>Webhooks</h1>
      <p>
        Each event of the workspace's leads is sent, signed, to these URLs. URLs must be https and public; http to
        127.0.0.1 or localhost (sandbox events only) works where the operator allows private networks.
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <p role="status" className="notice">
        {notice}
      </p>
      {secret && <SecretDialog secret={secret} onClose={() => setSecret(null)} />}
      <section aria-labelledby="add-h">
        <h2 id="add-h">Add an endpoint</h2>
        <form className="add-endpoint" onSubmit={add}>
          <label>
            URL <input name="url" type="url" required size={48} placeholder="https://example.com/hooks/leadintake" />
          </label>
          <fieldset>
            <legend>Events (none checked: every event)</legend>
            {eventTypes.map((t) => (
              <label key={t}>
                <input type="checkbox" name="eventTypes" value={t} /> {t}
              </label>
            ))}
          </fieldset>
          <button type="submit">Add endpoint</button>
        </form>
      </section>
      <section aria-labelledby="endpoints-h">
        <h2 id="endpoints-h">Endpoints</h2>
        {!endpoints ? (
          <p className="loading">Loading…</p>
        ) : endpoints.length === 0 ? (
          <p className="empty">No endpoints yet.</p>
        ) : (
          endpoints.map((ep) => (
            <article key={ep.id} className="endpoint" aria-label={ep.url}>
              <h3>
                <code>{ep.url}</code>{' '}
                {ep.enabled ? (
                  <span className="badge badge-booked">Enabled</span>
                ) : (
                  <span className="badge badge-needs_human">Disabled</span>
                )}
              </h3>
              <dl>
                <dt>Events</dt>
                <dd>{ep.eventTypes.includes('*') ? 'Every event' : ep.eventTypes.join(', ')}</dd>
                {!ep.enabled && (
                  <>
                    <dt>Disabled</dt>
                    <dd>
                      {ep.disabledReason ?? 'Disabled'}
                      {ep.disabledAt ? ` (${dateTime(ep.disabledAt)})` : ''}
                    </dd>
                  </>
                )}
                <dt>Added</dt>
                <dd>{dateTime(ep.createdAt)}</dd>
              </dl>
              <div className="actions">
                {!ep.enabled && (
                  <button
                    type="button"
                    onClick={() =>
                      void run(
                        `Enable ${ep.url}? Its pending deliveries resume.`,
                        () => api('POST', `${base}/${ep.id}/enable`),
                        'Endpoint enabled.',
                      )
                    }
                  >
                    Enable
                  </button>
                )}
                <button
                  type="button"
                  onClick={() =>
                    void run(
                      `Rotate the secret of ${ep.url}? The old one keeps signing for 24 hours.`,
                      async () => {
                        setSecret(
                          (await api<Schemas['AdminWebhookSecretRotated']>('POST', `${base}/${ep.id}/rotate-secret`))
                            .secret,
                        );
                      },
                      'Secret rotated.',
                    )
                  }
                >
                  Rotate secret
                </button>
                <button
                  type="button"
                  className="danger"
                  onClick={() =>
                    void run(
                      `Remove ${ep.url}? Its delivery history goes with it.`,
                      () => api('DELETE', `${base}/${ep.id}`),
                      'Endpoint removed.',
                    )
                  }
                >
                  Remove
                </button>
              </div>
              <Deliveries base={base} endpoint={ep} onError={setError} />
            </article>
          ))
        )}
      </section>
    </main>
  );
}
