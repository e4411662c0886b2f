import { useCallback, useEffect, useState } from 'react';
import { api, type Schemas } from './api.ts';
import { dateTime } from './format.ts';

// The lead's internal notes: operators only, never sent to the lead. A note reaches the agent's
// prompt only when its author ticks "Share with the AI agent" (off by default). Everyone reads
// them; agents and up write; only a note's author deletes it (the API checks all three).

type Notes = Schemas['AdminLeadNotes'];
export type LeadNote = Notes['notes'][number];

export function LeadNotes({ base, canWrite }: { base: string; canWrite: boolean }) {
  const [notes, setNotes] = useState<LeadNote[] | null>(null);
  const [draft, setDraft] = useState('');
  const [share, setShare] = useState(false);
  const [error, setError] = useState('');
  const url = `${base}/notes`;
  const load = useCallback(() => {
    api<Notes>('GET', url).then(
      (r) => setNotes(r.notes),
      (e: Error) => setError(e.message),
    );
  }, [url]);
  useEffect(load, [load]);
  const add = async () => {
    try {
      await api('POST', url, { text: draft, visibleToAgent: share });
      setDraft('');
      setShare(false);
      setError('');
      load();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const remove = async (id: number) => {
    if (!confirm('Delete this note?')) return;
    try {
      await api('DELETE', `${url}/${id}`);
      load();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <section aria-labelledby="notes-h" className="lead-notes">
      <h2 id="notes-h">Internal notes</h2>
      <p className="hint">Only your team sees these; the lead never does.</p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {canWrite && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (draft.trim()) void add();
          }}
        >
          <label>
            Note{' '}
            <textarea name="note" maxLength={2000} rows={2} value={draft} onChange={(e) => setDraft(e.target.value)} />
          </label>
          <label className="check">
            <input type="checkbox" checked={share} onChange={(e) => setShare(e.target.checked)} /> Share with the AI
            agent
          </label>
          <button type="submit" disabled={draft.trim() === ''}>
            Add note
          </button>
        </form>
      )}
      {notes === null ? (
        <p className="loading">Loading…</p>
      ) : notes.length === 0 ? (
        <p>No notes yet.</p>
      ) : (
        <ol className="notes">
          {notes.map((n) => (
            <li key={n.id}>
              <p className="note-text">{n.text}</p>
              <small>
                {n.operator?.name ?? 'A former member'} · <time dateTime={n.createdAt}>{dateTime(n.createdAt)}</time>
                {' · '}
                {n.visibleToAgent ? 'Shared with the AI agent' : 'Team only'}
              </small>
              {canWrite && n.mine && (
                <button
                  type="button"
                  className="link"
                  onClick={() => void remove(n.id)}
                  aria-label={`Delete note from ${dateTime(n.createdAt)}`}
                >
                  Delete
                </button>
              )}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
