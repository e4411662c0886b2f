import { useCallback, useEffect, useState } from 'react';
import { usePageActions } from './page-actions.ts';
import { api, type Schemas, type Session, type WorkspaceAccess } from './api.ts';
import { CopyButton } from './copy.tsx';
import { dateTime } from './format.ts';

// The Team page (docs/DASHBOARD.md, "Providers, API keys and team"), for owners: members with
// their roles, Invite (a one-time link to pass on: no mail is sent), change role, remove. The API
// refuses to leave the workspace without an owner (409), whatever the page shows.

const ROLES = ['owner', 'admin', 'agent', 'viewer'] as const;
type Team = Schemas['AdminTeam'];
type Member = Team['members'][number];
type Invite = Team['invites'][number];

export function TeamPage({ workspace, session }: { workspace: WorkspaceAccess; session: Session }) {
  const base = `/api/admin/workspaces/${encodeURIComponent(workspace.slug)}/team`;
  const [team, setTeam] = useState<{ members: Member[]; invites: Invite[] } | null>(null);
  const [link, setLink] = useState<{ email: string; link: string } | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: setError is a stable state setter
  const load = useCallback(() => {
    api<Team>('GET', base).then(setTeam, (e: Error) => setError(e.message));
  }, [base]);
  useEffect(load, [load]);

  const { error, notice, setError, run } = usePageActions(load);
  const invite = async (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    await run(
      null,
      async () => {
        const r = await api<Schemas['AdminInvited']>('POST', `${base}/invites`, {
          email: f.get('email'),
          role: f.get('role'),
        });
        form.reset();
        setLink({ email: r.invite.email, link: r.link });
      },
      'Invitation created.',
    );
  };

  return (
    <main className="team">
      <h1>Team</h1>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <p role="status" className="notice">
        {notice}
      </p>
      <section aria-labelledby="invite-h">
        <h2 id="invite-h">Invite someone</h2>
        <p>No e-mail is sent: copy the link and give it to the person. It works once, for 7 days.</p>
        <form className="add-endpoint" onSubmit={invite}>
          <label>
            E-mail <input name="email" type="email" required size={32} />
          </label>
          <label>
            Role{' '}
            <select name="role" defaultValue="agent">
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </label>
          <button type="submit">Invite</button>
        </form>
        {link && (
          <div className="invite-link">
            <p>
              <strong>Invitation link for {link.email}</strong> (shown once; only its hash is stored):
            </p>
            <label>
              Link <input readOnly value={link.link} size={64} onFocus={(e) => e.currentTarget.select()} />
            </label>
            <CopyButton text={link.link} label="Copy the invitation link" />
          </div>
        )}
      </section>
      <section aria-labelledby="members-h">
        <h2 id="members-h">Members</h2>
        <p>A workspace always keeps at least one owner: make someone else owner before you step down.</p>
        {!team ? (
          <p className="loading">Loading…</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">E-mail</th>
                <th scope="col">Role</th>
                <th scope="col">Member since</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {team.members.map((m) => (
                <tr key={m.id}>
                  <td>
                    {m.name}
                    {m.id === session.operator.id ? ' (you)' : ''}
                  </td>
                  <td>{m.email}</td>
                  <td>
                    <select
                      aria-label={`Role of ${m.name}`}
                      value={m.role}
                      onChange={(e) => {
                        const role = e.target.value;
                        void run(
                          `Make ${m.name} ${role}?`,
                          () => api('PATCH', `${base}/members/${m.id}`, { role }),
                          `${m.name} is now ${role}.`,
                        );
                      }}
                    >
                      {ROLES.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td>{dateTime(m.since)}</td>
                  <td>
                    <button
                      type="button"
                      className="danger"
                      aria-label={`Remove ${m.name}`}
                      onClick={() =>
                        void run(
                          `Remove ${m.name} (${m.email}) from ${workspace.name}?`,
                          () => api('DELETE', `${base}/members/${m.id}`),
                          `${m.name} removed.`,
                        )
                      }
                    >
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      {team && team.invites.length > 0 && (
        <section aria-labelledby="pending-h">
          <h2 id="pending-h">Pending invitations</h2>
          <table>
            <thead>
              <tr>
                <th scope="col">E-mail</th>
                <th scope="col">Role</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {team.invites.map((i) => (
                <tr key={i.id}>
                  <td>{i.email}</td>
                  <td>{i.role}</td>
                  <td>{dateTime(i.expiresAt)}</td>
                  <td>
                    <button
                      type="button"
                      aria-label={`Cancel the invitation of ${i.email}`}
                      onClick={() =>
                        void run(
                          `Cancel the invitation of ${i.email}?`,
                          () => api('DELETE', `${base}/invites/${i.id}`),
                          'Invitation cancelled.',
                        )
                      }
                    >
                      Cancel
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </main>
  );
}
