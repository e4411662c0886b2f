import { StrictMode, useCallback, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { api, setCsrf, type Session } from './api.ts';
import { HandOffAlerts } from './alerts.tsx';
import { InvitePage } from './invite.tsx';
import { useLiveStatus } from './live.ts';
import { Link, Redirect } from './link.tsx';
import { navigate, useLocation } from './nav.ts';
import { OfflineBanner } from './offline-banner.tsx';
import { focusMain, useFocusHeadingOnNavigate } from './page-focus.ts';
import { Shortcuts } from './shortcuts.tsx';
import { SECTIONS } from './sections.tsx';
import './styles.css';

// The operators' dashboard (docs/DASHBOARD.md): sign in, then the workspace's pages (sections.tsx). Routes
// are paths under /admin, handled here with the History API (nav.ts; the service answers
// index.html for each of them).

function SignIn({ onSignedIn, signedOut }: { onSignedIn: (s: Session) => void; signedOut?: boolean }) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setBusy(true);
    setError('');
    try {
      onSignedIn(
        await api<Session>('POST', '/api/admin/session', { email: form.get('email'), password: form.get('password') }),
      );
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="signin">
      <h1>Sign in</h1>
      {signedOut && (
        <p role="status" className="notice">
          You were signed out. Sign in again to go on.
        </p>
      )}
      <form onSubmit={submit}>
        <label>
          E-mail <input name="email" type="email" autoComplete="username" required />
        </label>
        <label>
          Password <input name="password" type="password" autoComplete="current-password" required />
        </label>
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}

function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const { path } = useLocation();
  const signedIn = useCallback((s: Session) => {
    setCsrf(s.csrfToken);
    setSession(s);
  }, []);
  useEffect(() => {
    // 401 (or the service unreachable): the sign-in form.
    api<Session>('GET', '/api/admin/session').then(signedIn, () => setSession(null));
  }, [signedIn]);
  useFocusHeadingOnNavigate(path);
  // The live stream ended (live.ts): signed out, here or elsewhere, or no longer a member. The
  // session is asked again: the sign-in form, or the workspaces this operator still has.
  const live = useLiveStatus();
  const [signedOut, setSignedOut] = useState(false);
  useEffect(() => {
    if (live.state !== 'ended') return;
    api<Session>('GET', '/api/admin/session').then(signedIn, () => {
      setSignedOut(true);
      setSession(null);
    });
  }, [live, signedIn]);
  // An invitation link (team.tsx) works signed in or not: its page handles both.
  if (path === '/admin/invite') return <InvitePage />;
  if (session === undefined) return <p className="loading">Loading…</p>;
  if (session === null)
    return (
      <SignIn
        onSignedIn={(s) => {
          setSignedOut(false);
          signedIn(s);
        }}
        signedOut={signedOut}
      />
    );
  const [, , slug, section, leadId] = path.split('/');
  const workspace = session.workspaces.find((w) => w.slug === slug) ?? session.workspaces[0];
  if (!workspace) {
    return (
      <main>
        <h1>No workspace</h1>
        <p>
          Ask an owner to add you:{' '}
          <code>leadintake user add {session.operator.email} --workspace SLUG --role agent</code>
        </p>
      </main>
    );
  }
  // The pages this operator's role may open (sections.tsx); anything else goes to the inbox.
  const sections = SECTIONS.filter((x) => workspace.permissions.includes(x.permission));
  const current = sections.find((x) => x.path === section);
  if (slug !== workspace.slug || !current) return <Redirect to={`/admin/${workspace.slug}/leads`} />;
  const signOut = async () => {
    await api('DELETE', '/api/admin/session').catch(() => {});
    setSession(null);
  };
  return (
    <>
      {/* biome-ignore lint/a11y/useValidAnchor: a skip link, which works without JavaScript too */}
      <a
        className="skip-link"
        href="#content"
        onClick={(e) => {
          e.preventDefault();
          focusMain();
        }}
      >
        Skip to content
      </a>
      <header className="top">
        <Link className="brand" to={`/admin/${workspace.slug}/leads`}>
          leadintake
        </Link>
        <nav aria-label="Workspace">
          {sections.map((x) => (
            <Link key={x.path} to={`/admin/${workspace.slug}/${x.path}`} current={x === current}>
              {x.label}
            </Link>
          ))}
        </nav>
        <label className="switch">
          Workspace{' '}
          <select value={workspace.slug} onChange={(e) => navigate(`/admin/${e.target.value}/leads`)}>
            {session.workspaces.map((w) => (
              <option key={w.slug} value={w.slug}>
                {w.name} ({w.role})
              </option>
            ))}
          </select>
        </label>
        <HandOffAlerts key={workspace.slug} workspace={workspace} />
        <span className="who">{session.operator.name}</span>
        <button type="button" className="quiet" onClick={signOut}>
          Sign out
        </button>
      </header>
      <OfflineBanner />
      <div id="content" tabIndex={-1}>
        {current.render({ workspace, session, subpath: leadId })}
      </div>
      <Shortcuts page={section === 'leads' ? (leadId ? 'lead' : 'inbox') : 'other'} />
    </>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
