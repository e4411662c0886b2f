import { useEffect, useState } from 'react';
import { api, setCsrf, type Schemas, type Session } from './api.ts';

// The invitee's page (/admin/invite#<token>; docs/DASHBOARD.md, "Providers, API keys and team"):
// the token is after `#`, so the browser never sends it in a URL or a Referer; the page posts it.
// The API does not say whether the address has an account (the owner who sent the link would learn
// it too), so both ways are offered: create the account, or sign in as it, then accept.

type InviteInfo = Schemas['AdminInvite'];

export function InvitePage() {
  const token = location.hash.slice(1);
  const [info, setInfo] = useState<InviteInfo | null>(null);
  const [session, setSession] = useState<Session | null>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api<InviteInfo>('POST', '/api/admin/invites/lookup', { token }).then(setInfo, (e: Error) => setError(e.message));
    api<Session>('GET', '/api/admin/session').then(
      (s) => {
        setCsrf(s.csrfToken);
        setSession(s);
      },
      () => setSession(null),
    );
  }, [token]);

  const step = async (call: () => Promise<void>) => {
    setBusy(true);
    setError('');
    try {
      await call();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const accept = (body: Record<string, unknown>) =>
    step(async () => {
      await api('POST', `/api/admin/workspaces/${encodeURIComponent(info!.workspace.slug)}/invites/accept`, {
        token,
        ...body,
      });
      // A full load: the page starts again with the new session and membership.
      location.assign(`/admin/${encodeURIComponent(info!.workspace.slug)}/leads`);
    });
  const create = (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    if (f.get('password') !== f.get('confirm')) {
      setError('The two passwords differ.');
      return;
    }
    void accept({ name: f.get('name'), password: f.get('password') });
  };
  const signIn = (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    void step(async () => {
      const s = await api<Session>('POST', '/api/admin/session', { email: info!.email, password: f.get('password') });
      setCsrf(s.csrfToken);
      setSession(s);
    });
  };

  if (!info)
    return (
      <main className="signin">
        <h1>Invitation</h1>
        {error ? (
          <p role="alert" className="error">
            {error}
          </p>
        ) : (
          <p className="loading">Loading…</p>
        )}
      </main>
    );
  const signedInAsInvitee = session?.operator.email === info.email;
  return (
    <main className="signin">
      <h1>Join {info.workspace.name}</h1>
      <p>
        You are invited as <strong>{info.role}</strong> with the address {info.email}. The link works until{' '}
        {new Date(info.expiresAt).toLocaleString()}.
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {signedInAsInvitee ? (
        <button type="button" disabled={busy} onClick={() => void accept({})}>
          Accept invitation
        </button>
      ) : (
        <>
          {session && (
            <p>
              You are signed in as {session.operator.email}; sign in as {info.email} to accept.
            </p>
          )}
          <h2>New here? Create your account</h2>
          <form onSubmit={create}>
            <label>
              Your name <input name="name" autoComplete="name" required maxLength={200} />
            </label>
            <label>
              Password (12 characters or more){' '}
              <input name="password" type="password" autoComplete="new-password" minLength={12} required />
            </label>
            <label>
              Password again{' '}
              <input name="confirm" type="password" autoComplete="new-password" minLength={12} required />
            </label>
            <button type="submit" disabled={busy}>
              Create account and join
            </button>
          </form>
          <h2>Already have an account for {info.email}?</h2>
          <form onSubmit={signIn}>
            <label>
              Your current password <input name="password" type="password" autoComplete="current-password" required />
            </label>
            <button type="submit" disabled={busy}>
              Sign in
            </button>
          </form>
        </>
      )}
    </main>
  );
}
