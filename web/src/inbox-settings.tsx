import { useEffect, useState } from 'react';
import { api, type Schemas, type WorkspaceAccess } from './api.ts';
import { saveErrorText } from './save-error.ts';

// The inbox's settings block on the Agent page (docs/DASHBOARD.md, "The operator's day"): after how
// many minutes a lead waiting for a person turns amber, then red, in every operator's inbox.

type InboxSettings = Schemas['AdminInboxSettings'];

export function InboxSettingsBlock({ workspace }: { workspace: WorkspaceAccess }) {
  const url = `/api/admin/workspaces/${encodeURIComponent(workspace.slug)}/inbox-settings`;
  const canEdit = workspace.permissions.includes('settings.manage');
  const [saved, setSaved] = useState<InboxSettings | null>(null);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  useEffect(() => {
    api<InboxSettings>('GET', url).then(setSaved, (e: Error) => setError(e.message));
  }, [url]);
  if (!saved)
    return error ? (
      <p role="alert" className="error">
        {error}
      </p>
    ) : null;
  const save = async (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    setError('');
    setNotice('');
    try {
      const r = await api<InboxSettings>('PUT', url, {
        waitingAmberMinutes: Number(f.get('amber')),
        waitingRedMinutes: Number(f.get('red')),
      });
      setSaved(r);
      setNotice('Inbox settings saved.');
    } catch (err) {
      setError(saveErrorText(err));
    }
  };
  return (
    <section aria-labelledby="inbox-settings-h" className="inbox-settings">
      <h2 id="inbox-settings-h">Inbox</h2>
      <p>A lead waiting for a person turns amber, then red, in the inbox after these many minutes.</p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <p role="status" className="notice">
        {notice}
      </p>
      {canEdit ? (
        <form
          className="agent-form"
          onSubmit={(e) => void save(e)}
          key={`${saved.waitingAmberMinutes}-${saved.waitingRedMinutes}`}
        >
          <label>
            Amber after (minutes){' '}
            <input name="amber" type="number" min={1} max={1440} required defaultValue={saved.waitingAmberMinutes} />
          </label>
          <label>
            Red after (minutes){' '}
            <input name="red" type="number" min={1} max={10080} required defaultValue={saved.waitingRedMinutes} />
          </label>
          <button type="submit">Save inbox settings</button>
        </form>
      ) : (
        <dl>
          <dt>Amber after</dt>
          <dd>{saved.waitingAmberMinutes} min</dd>
          <dt>Red after</dt>
          <dd>{saved.waitingRedMinutes} min</dd>
        </dl>
      )}
    </section>
  );
}
