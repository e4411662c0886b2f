import { useCallback, useEffect, useState } from 'react';
import { api, type Schemas, type WorkspaceAccess } from './api.ts';
import { CopyButton } from './copy.tsx';

// The Providers page (docs/DASHBOARD.md, "Providers, API keys and team"): one form per provider
// section of the workspace config, Test connection (the checks of `leadintake workspace verify`)
// and the URLs to paste into each provider. Secrets are write-only: the API sends only whether
// each is set and its last 4 characters; an empty secret field keeps the stored value.

type Section = 'voice' | 'whatsapp' | 'scheduling' | 'llm';
type Json = Record<string, unknown>;
interface Masked {
  set: true;
  last4: string | null;
}
interface Field {
  path: string;
  label: string;
  secret?: boolean;
  number?: boolean;
  optional?: boolean;
  help?: string;
}
type Providers = Schemas['AdminProviders'];
type TestResult = Schemas['AdminProviderTest'];

const TITLES: Record<Section, string> = {
  voice: 'Voice (Vapi)',
  whatsapp: 'WhatsApp',
  scheduling: 'Scheduling (Cal.com)',
  llm: 'Model',
};
const FIELDS: Record<string, Field[]> = {
  voice: [
    { path: 'apiKey', label: 'Vapi private API key', secret: true },
    { path: 'assistantId', label: 'Assistant id' },
    { path: 'phoneNumberId', label: 'Phone number id' },
    {
      path: 'serverSecret',
      label: 'Server secret (X-Vapi-Secret)',
      secret: true,
      optional: true,
      help: 'Optional: by default derived from the API key.',
    },
    {
      path: 'hmac.credentialId',
      label: 'HMAC credential id',
      optional: true,
      help: "Optional: Vapi's HMAC credential instead of the server secret.",
    },
    { path: 'hmac.secretKey', label: 'HMAC secret', secret: true, optional: true },
  ],
  'whatsapp:twilio': [
    { path: 'accountSid', label: 'Account SID' },
    { path: 'authToken', label: 'Auth token', secret: true },
    { path: 'from', label: 'Sender number', help: '+digits' },
    { path: 'templateContentSid', label: 'First-contact template (HX…)' },
  ],
  'whatsapp:meta': [
    { path: 'accessToken', label: 'Access token', secret: true },
    { path: 'phoneNumberId', label: 'Phone number id' },
    { path: 'appSecret', label: 'App secret', secret: true },
    {
      path: 'verifyToken',
      label: 'Verify token',
      secret: true,
      help: 'What you type as "Verify token" in the App Dashboard.',
    },
    { path: 'templateName', label: 'First-contact template name' },
    { path: 'templateLanguage', label: 'Template language', optional: true },
  ],
  scheduling: [
    { path: 'apiKey', label: 'Cal.com API key', secret: true },
    { path: 'eventTypeId', label: 'Event type id', number: true },
    { path: 'webhookSecret', label: 'Webhook secret', secret: true, optional: true },
  ],
  llm: [
    {
      path: 'baseUrl',
      label: 'Base URL',
      optional: true,
      help: 'Empty: OPENAI_BASE_URL. Your own server needs your own API key.',
    },
    {
      path: 'apiKey',
      label: 'API key',
      secret: true,
      optional: true,
      help: 'Empty when never set: OPENAI_API_KEY (only with OPENAI_BASE_URL).',
    },
    { path: 'model', label: 'Model name', optional: true, help: 'Empty: LLM_MODEL.' },
  ],
};

const get = (o: Json | null | undefined, path: string): unknown =>
  path.split('.').reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Json)[k] : undefined), o);
function set(o: Json, path: string, value: unknown): void {
  const keys = path.split('.');
  let cur = o;
  for (const k of keys.slice(0, -1)) cur = (cur[k] ??= {}) as Json;
  cur[keys.at(-1)!] = value;
}
const isMasked = (v: unknown): v is Masked => !!v && typeof v === 'object' && (v as Masked).set === true;
/** The stored section without its masks: the fields the page does not show are sent back as they are. */
function unmasked(v: unknown): unknown {
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v as Json)
      .filter(([, x]) => !isMasked(x))
      .map(([k, x]) => [k, unmasked(x)]),
  );
}

function ProviderForm({
  base,
  section,
  stored,
  onSaved,
  sandboxOnly,
}: {
  base: string;
  section: Section;
  stored: Json | null;
  onSaved: () => void;
  sandboxOnly: boolean;
}) {
  const [provider, setProvider] = useState<string>(
    String(stored?.provider ?? (section === 'whatsapp' ? 'twilio' : '')),
  );
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [result, setResult] = useState<TestResult | null>(null);
  const [testing, setTesting] = useState(false);
  const fields = FIELDS[section === 'whatsapp' ? `whatsapp:${provider}` : section]!;
  const sameProvider = section !== 'whatsapp' || stored?.provider === provider;
  const id = (f: Field) => `${section}-${f.path.replace('.', '-')}`;

  const save = async (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const formEl = e.currentTarget;
    const form = new FormData(formEl);
    const body = (sameProvider ? unmasked(stored ?? {}) : {}) as Json;
    if (section === 'voice') body.provider = 'vapi';
    if (section === 'scheduling') body.provider = 'calcom';
    if (section === 'whatsapp') body.provider = provider;
    for (const f of fields) {
      const raw = String(form.get(f.path) ?? '').trim();
      if (f.secret && raw === '') continue; // keeps the stored secret
      if (raw === '') {
        if (f.path.includes('.')) continue;
        delete body[f.path];
        continue;
      }
      set(body, f.path, f.number ? Number(raw) : raw);
    }
    if (section === 'voice' && body.hmac && !get(body, 'hmac.credentialId')) delete body.hmac;
    setError('');
    setNotice('');
    try {
      await api('PUT', `${base}/${section}`, body);
      setNotice('Saved.');
      formEl.reset();
      onSaved();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const test = async () => {
    setTesting(true);
    setError('');
    try {
      setResult(await api<TestResult>('POST', `${base}/${section}/test`));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setTesting(false);
    }
  };

  return (
    <section className="provider" aria-labelledby={`${section}-h`}>
      <h2 id={`${section}-h`}>{TITLES[section]}</h2>
      {sandboxOnly && stored === null && (
        <p className="notice">Sandbox: simulated provider. Set it here for live leads.</p>
      )}
      <form onSubmit={save} className="provider-form">
        {section === 'whatsapp' && (
          <label>
            Provider{' '}
            <select value={provider} onChange={(e) => setProvider(e.target.value)}>
              <option value="twilio">Twilio</option>
              <option value="meta">Meta (WhatsApp Cloud API)</option>
            </select>
          </label>
        )}
        {fields.map((f) => {
          const value = sameProvider ? get(stored, f.path) : undefined;
          const hint = f.secret
            ? isMasked(value)
              ? `Set${value.last4 ? `, ending …${value.last4}` : ''}. ` +
                'Type a new one to replace it; leave empty to keep it.'
              : 'Not set.'
            : '';
          return (
            <div key={`${provider}-${f.path}`} className="field">
              <label htmlFor={id(f)}>
                {f.label}
                {f.optional ? ' (optional)' : ''}
              </label>
              <input
                id={id(f)}
                name={f.path}
                type={f.secret ? 'password' : f.number ? 'number' : 'text'}
                autoComplete={f.secret ? 'new-password' : 'off'}
                defaultValue={f.secret || value === undefined ? '' : String(value)}
                aria-describedby={hint || f.help ? `${id(f)}-hint` : undefined}
                size={40}
              />
              {(hint || f.help) && <small id={`${id(f)}-hint`}>{[hint, f.help].filter(Boolean).join(' ')}</small>}
            </div>
          );
        })}
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <p role="status" className="notice">
          {notice}
        </p>
        <div className="actions">
          <button type="submit">Save {TITLES[section]}</button>
          <button type="button" onClick={() => void test()} disabled={testing}>
            Test connection
          </button>
        </div>
      </form>
      {testing && <p className="loading">Testing…</p>}
      {result && (
        <ul className="checks" aria-label={`Test connection: ${TITLES[section]}`}>
          {result.checks.map((c, i) => (
            <li key={i} className={c.ok ? 'pass' : 'fail'}>
              <strong>{c.ok ? 'PASS' : 'FAIL'}</strong> {c.provider} {c.check}: {c.note}
            </li>
          ))}
          {result.notConfigured.map((m) => (
            <li key={m.section} className="fail">
              <strong>NOT SET</strong> {m.note}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

export function ProvidersPage({ workspace }: { workspace: WorkspaceAccess }) {
  const base = `/api/admin/workspaces/${encodeURIComponent(workspace.slug)}/providers`;
  const [data, setData] = useState<Providers | null>(null);
  const [error, setError] = useState('');
  const load = useCallback(() => {
    api<Providers>('GET', base).then(setData, (e: Error) => setError(e.message));
  }, [base]);
  useEffect(load, [load]);
  if (!data)
    return (
      <main>
        {error ? (
          <p role="alert" className="error">
            {error}
          </p>
        ) : (
          <p className="loading">Loading…</p>
        )}
      </main>
    );
  const sections: Section[] = data.channel === 'voice' ? ['voice', 'scheduling'] : ['whatsapp', 'llm', 'scheduling'];
  return (
    <main className="providers">
      <h1>Providers</h1>
      {data.sandboxOnly && (
        <p className="notice" role="note">
          <strong>Sandbox: simulated providers.</strong> This workspace has no live key and no live lead yet: its
          sandbox leads talk to simulated providers (calls, messages, bookings), whatever is set below. What you set
          here is for live leads.
        </p>
      )}
      <p>
        Credentials are stored encrypted. Secrets are never shown again: a saved secret appears as "set, ending …" with
        its last 4 characters.
      </p>
      <section aria-labelledby="urls-h">
        <h2 id="urls-h">URLs to paste into your providers</h2>
        {data.warning && (
          <p className="warning" role="note">
            <strong>Warning:</strong> {data.warning}
          </p>
        )}
        <table>
          <thead>
            <tr>
              <th scope="col">Provider</th>
              <th scope="col">Where</th>
              <th scope="col">URL</th>
              <th scope="col">
                <span className="visually-hidden">Copy</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {data.urls.map((u) => (
              <tr key={u.url}>
                <td>{u.provider}</td>
                <td>
                  {u.label}
                  <br />
                  <small>{u.note}</small>
                </td>
                <td>
                  <code>{u.url}</code>
                </td>
                <td>
                  <CopyButton text={u.url} label={`Copy ${u.provider} ${u.label}`} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      {sections.map((s) => (
        <ProviderForm
          key={s}
          base={base}
          section={s}
          stored={data.providers[s]}
          onSaved={load}
          sandboxOnly={data.sandboxOnly}
        />
      ))}
    </main>
  );
}
