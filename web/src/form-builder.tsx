import { useCallback, useEffect, useRef, useState } from 'react';
import { api, type Schemas, type WorkspaceAccess } from './api.ts';
import { FormIntake } from './form-intake.tsx';
import { formResponsesExample, htmlSnippet } from './form-snippets.ts';
import { saveErrorText } from './save-error.ts';
import type { FormSettings, Question, QuestionType } from './settings-types.ts';

// The form builder (docs/DASHBOARD.md, "Form builder and agent settings"): the workspace's ordered
// qualification questions. Owners and admins edit (add, edit, reorder by drag or with Move up /
// Move down, delete) and save the whole list; everyone else reads it. Beside it: what an
// integrator's form sends, with the ids as saved.

/** A question being edited: `key` identifies it on the page, also before it has an id. */
interface Draft extends Question {
  key: string;
}

let nextKey = 0;
const toDraft = (q: Question): Draft => ({ ...q, key: q.id || `new-${nextKey++}` });

function CopyButton({ text, what }: { text: string; what: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <>
      <button
        type="button"
        onClick={() =>
          void navigator.clipboard?.writeText(text).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        Copy {what}
      </button>
      <span role="status" className="notice">
        {copied ? 'Copied.' : ''}
      </span>
    </>
  );
}

function QuestionEditor({
  q,
  index,
  count,
  update,
  move,
  remove,
  dragging,
}: {
  q: Draft;
  index: number;
  count: number;
  update: (patch: Partial<Draft>) => void;
  move: (by: -1 | 1) => void;
  remove: () => void;
  dragging: { start: () => void; drop: () => void };
}) {
  const name = q.label || `question ${index + 1}`;
  return (
    // Only the handle drags (text in the fields stays selectable); the whole question is the drop target.
    <li
      className="question"
      onDragOver={(e) => e.preventDefault()}
      onDrop={(e) => {
        e.preventDefault();
        dragging.drop();
      }}
    >
      <span
        className="drag-handle"
        aria-hidden="true"
        draggable
        onDragStart={(e) => {
          e.dataTransfer.setData('text/plain', q.key);
          dragging.start();
        }}
        title="Drag to reorder"
      >
        ⠿
      </span>
      <div className="question-fields">
        <label>
          Label <input value={q.label} size={40} onChange={(e) => update({ label: e.target.value })} />
        </label>
        <label>
          Type
          <select
            value={q.type}
            onChange={(e) => {
              const type = e.target.value as QuestionType;
              const range = type === 'number' ? {} : { min: undefined, max: undefined };
              update(
                type === 'choice'
                  ? { type, options: q.options ?? ['', ''], ...range }
                  : { type, options: undefined, ...range },
              );
            }}
          >
            <option value="text">Text</option>
            <option value="choice">Choice</option>
            <option value="number">Number</option>
          </select>
        </label>
        <label>
          <input type="checkbox" checked={q.required} onChange={(e) => update({ required: e.target.checked })} />{' '}
          Required
        </label>
        {q.type === 'choice' && (
          <label className="options">
            Options, one per line
            <textarea
              rows={3}
              value={(q.options ?? []).join('\n')}
              onChange={(e) => update({ options: e.target.value.split('\n') })}
            />
          </label>
        )}
        {q.type === 'number' && (
          <>
            <label>
              Minimum{' '}
              <input
                type="number"
                value={q.min ?? ''}
                placeholder="0"
                onChange={(e) => update({ min: numberOrUndefined(e.target.value) })}
              />
            </label>
            <label>
              Maximum{' '}
              <input
                type="number"
                value={q.max ?? ''}
                placeholder="none"
                onChange={(e) => update({ max: numberOrUndefined(e.target.value) })}
              />
            </label>
          </>
        )}
        <span className="qid">
          {q.id ? (
            <>
              Id <code>{q.id}</code>
            </>
          ) : (
            'New: gets its id when saved'
          )}
        </span>
      </div>
      <div className="question-actions">
        <button
          type="button"
          id={`up-${q.key}`}
          disabled={index === 0}
          onClick={() => move(-1)}
          aria-label={`Move up: ${name}`}
        >
          Move up
        </button>
        <button
          type="button"
          id={`down-${q.key}`}
          disabled={index === count - 1}
          onClick={() => move(1)}
          aria-label={`Move down: ${name}`}
        >
          Move down
        </button>
        <button type="button" className="danger" onClick={remove} aria-label={`Delete: ${name}`}>
          Delete
        </button>
      </div>
    </li>
  );
}

/** A number field's value: blank is "not set". */
function numberOrUndefined(text: string): number | undefined {
  return text.trim() === '' || Number.isNaN(Number(text)) ? undefined : Number(text);
}

function ReadOnlyQuestion({ q }: { q: Question }) {
  return (
    <li className="question">
      <div className="question-fields">
        <strong>{q.label}</strong>{' '}
        <span>
          {q.type}
          {q.required ? ', required' : ''}
        </span>
        {q.options && <span>Options: {q.options.join(', ')}</span>}
        {q.type === 'number' && (
          <span>
            From {q.min ?? 0}
            {q.max !== undefined ? ` to ${q.max}` : ''}
          </span>
        )}
        <span className="qid">
          Id <code>{q.id}</code>
        </span>
      </div>
    </li>
  );
}

export function FormPage({ workspace }: { workspace: WorkspaceAccess }) {
  const base = `/api/admin/workspaces/${encodeURIComponent(workspace.slug)}/form`;
  const canEdit = workspace.permissions.includes('settings.manage');
  const [saved, setSaved] = useState<FormSettings | null>(null);
  const [drafts, setDrafts] = useState<Draft[]>([]);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  // A new object per request: a repeated request for the same button must still run the effect.
  const [focus, setFocus] = useState<{ id: string } | null>(null);
  const dragged = useRef<number | null>(null);

  const show = useCallback((f: FormSettings) => {
    setSaved(f);
    setDrafts(f.questions.map(toDraft));
  }, []);
  const load = useCallback(() => {
    api<FormSettings>('GET', base).then(show, (e: Error) => setError(e.message));
  }, [base, show]);
  useEffect(load, [load]);
  // Keyboard reordering keeps focus on the button that moved the question (or its neighbour at an end).
  // No reset to null afterwards: that reset and the next key press could land in one render, leave
  // the value unchanged and skip the effect (the browser test caught it, intermittently).
  useEffect(() => {
    if (!focus) return;
    const { id } = focus;
    const el = document.getElementById(id) as HTMLButtonElement | null;
    const other = document.getElementById(
      id.startsWith('up-') ? id.replace('up-', 'down-') : id.replace('down-', 'up-'),
    ) as HTMLButtonElement | null;
    (el && !el.disabled ? el : other)?.focus();
  }, [focus]);

  const moveTo = (from: number, to: number) => {
    if (to < 0 || to >= drafts.length || from === to) return;
    const next = [...drafts];
    const [item] = next.splice(from, 1);
    next.splice(to, 0, item!);
    setDrafts(next);
    setNotice(`Moved "${item!.label}" to position ${to + 1} of ${next.length}.`);
  };
  const save = async () => {
    setError('');
    try {
      const questions: Schemas['AdminFormSave']['questions'] = drafts.map(({ key: _key, ...q }) => ({
        ...(q.id ? { id: q.id } : {}),
        label: q.label,
        type: q.type,
        required: q.required,
        ...(q.type === 'choice' ? { options: (q.options ?? []).map((o) => o.trim()).filter((o) => o !== '') } : {}),
        ...(q.type === 'number' && q.min !== undefined ? { min: q.min } : {}),
        ...(q.type === 'number' && q.max !== undefined ? { max: q.max } : {}),
      }));
      show(await api<FormSettings>('PUT', base, { version: saved!.version, questions }));
      setNotice('Form saved.');
    } catch (e) {
      setError(saveErrorText(e));
    }
  };

  if (!saved)
    return (
      <main className="form-builder">
        <h1>Form</h1>
        {error ? (
          <p role="alert" className="error">
            {error}
          </p>
        ) : (
          <p className="loading">Loading…</p>
        )}
      </main>
    );
  const dirty = JSON.stringify(drafts.map(({ key: _k, ...q }) => q)) !== JSON.stringify(saved.questions);
  return (
    <main className="form-builder">
      <h1>Form</h1>
      <p>
        The qualification questions, in the order the agent asks them. Each question keeps its id for good: forms send
        answers by id, and a deleted question's answers stay on old leads under the label it had.
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <p role="status" className="notice">
        {notice}
      </p>
      <div className="form-columns">
        <section aria-labelledby="questions-h">
          <h2 id="questions-h">Questions</h2>
          {drafts.length === 0 && <p className="empty">No questions yet: the agent qualifies on the criteria alone.</p>}
          {canEdit ? (
            <>
              <ol className="questions">
                {drafts.map((q, i) => (
                  <QuestionEditor
                    key={q.key}
                    q={q}
                    index={i}
                    count={drafts.length}
                    update={(patch) => setDrafts(drafts.map((d) => (d.key === q.key ? { ...d, ...patch } : d)))}
                    move={(by) => {
                      moveTo(i, i + by);
                      setFocus({ id: `${by < 0 ? 'up' : 'down'}-${q.key}` });
                    }}
                    remove={() => {
                      setDrafts(drafts.filter((d) => d.key !== q.key));
                      setNotice(`Deleted "${q.label}" (not saved yet).`);
                    }}
                    dragging={{
                      start: () => (dragged.current = i),
                      drop: () => {
                        if (dragged.current !== null) moveTo(dragged.current, i);
                        dragged.current = null;
                      },
                    }}
                  />
                ))}
              </ol>
              <div className="toolbar">
                <button
                  type="button"
                  onClick={() => setDrafts([...drafts, toDraft({ id: '', label: '', type: 'text', required: false })])}
                >
                  Add question
                </button>
                <button type="button" onClick={() => void save()} disabled={!dirty}>
                  Save form
                </button>
                {dirty && <span>Unsaved changes.</span>}
              </div>
            </>
          ) : (
            <>
              <p>Your role can read the form; owners and admins edit it.</p>
              <ol className="questions">
                {saved.questions.map((q) => (
                  <ReadOnlyQuestion key={q.id} q={q} />
                ))}
              </ol>
            </>
          )}
          {saved.retiredQuestions.length > 0 && (
            <details>
              <summary>Deleted questions ({saved.retiredQuestions.length})</summary>
              <p>Old leads' answers to these stay readable under these labels.</p>
              <ul>
                {saved.retiredQuestions.map((r) => (
                  <li key={r.id}>
                    {r.label} <code>{r.id}</code>
                  </li>
                ))}
              </ul>
            </details>
          )}
        </section>
        <aside aria-labelledby="integrate-h" className="integrate">
          <h2 id="integrate-h">Sending answers from your form</h2>
          {saved.channel === 'whatsapp' && (
            <p className="hint">
              This is a WhatsApp workspace: the agent asks these questions in the chat. <code>formResponses</code> is
              meant for voice workspaces; the public API still stores answers sent with a WhatsApp lead, and the agent
              then does not ask those questions again.
            </p>
          )}
          <p>
            Add the answers to the lead you send to <code>POST /api/public/leads</code>, by question id (as saved):
          </p>
          <pre role="region" aria-label="formResponses example" tabIndex={0}>
            {formResponsesExample(saved.questions)}
          </pre>
          <CopyButton text={formResponsesExample(saved.questions)} what="formResponses" />
          <h3>An HTML form</h3>
          <p>
            It posts to your own back end, which calls leadintake with the API key. Never put the API key in a web page:
            anyone can read a page's source, and with the key they could submit leads as your workspace and spend its
            quota.
          </p>
          <pre role="region" aria-label="HTML form example" tabIndex={0}>
            {htmlSnippet(saved.questions, saved.leadsUrl)}
          </pre>
          <CopyButton text={htmlSnippet(saved.questions, saved.leadsUrl)} what="HTML" />
        </aside>
      </div>
      <FormIntake workspace={workspace} />
    </main>
  );
}
