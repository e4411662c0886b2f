import { useEffect, useState } from 'react';
import { api, type Schemas } from './api.ts';
import { saveErrorText } from './save-error.ts';

// A Meta source's field mapping on the Form page (docs/INTAKE.md, "Meta Lead Ads"): each Meta
// field name (Meta's standard `full_name`, `phone_number`… or a custom question's key) → where
// its answer goes. Meta's standard fields come prefilled with their defaults and cannot be taken
// off (the intake would put the default back): map one to "Ignore" instead. A field in no row is
// kept in the lead's metadata under its Meta name. The server checks the targets again, and that
// a question is one of this workspace's.

type MetaSettings = NonNullable<Schemas['AdminLeadSources']['sources'][number]['meta']>;
type Question = Schemas['AdminForm']['questions'][number];

interface Row {
  key: number;
  field: string;
  /** A lead field, `question:<id>`, `ignore`, or `metadata` with `metaKey`. */
  target: string;
  metaKey: string;
}

const LEAD_FIELDS = [
  ['name', 'Name'],
  ['first_name', 'First name'],
  ['last_name', 'Last name'],
  ['phone', 'Phone'],
  ['email', 'E-mail'],
  ['goal', 'Goal'],
] as const;

let nextKey = 0;
const rowOf = (field: string, target: string): Row =>
  target.startsWith('metadata:')
    ? { key: nextKey++, field, target: 'metadata', metaKey: target.slice('metadata:'.length) }
    : { key: nextKey++, field, target, metaKey: '' };

/** The rows as the API takes them, or the first thing to fix. */
function mappingOf(rows: Row[]): { mapping: Record<string, string> } | { problem: string } {
  const mapping: Record<string, string> = {};
  for (const [i, r] of rows.entries()) {
    const field = r.field.trim();
    if (field === '') return { problem: `Row ${i + 1}: type the Meta field name.` };
    if (field in mapping) return { problem: `${field} is in two rows.` };
    if (r.target === 'metadata' && !/^[A-Za-z0-9_.-]{1,64}$/.test(r.metaKey.trim()))
      return { problem: `${field}: a metadata key is letters, digits, _ . or - (up to 64).` };
    mapping[field] = r.target === 'metadata' ? `metadata:${r.metaKey.trim()}` : r.target;
  }
  return { mapping };
}

export function MetaMappingEditor(props: {
  meta: MetaSettings;
  sourceName: string;
  url: string;
  formUrl: string;
  canEdit: boolean;
  saved: () => void;
}) {
  const { meta, canEdit } = props;
  const [rows, setRows] = useState<Row[]>(() => Object.entries(meta.fieldMapping).map(([f, t]) => rowOf(f, t)));
  const [organic, setOrganic] = useState(meta.organicToSandbox);
  const [questions, setQuestions] = useState<Question[]>([]);
  const [message, setMessage] = useState<{ error: boolean; text: string } | null>(null);
  useEffect(() => {
    api<Schemas['AdminForm']>('GET', props.formUrl).then(
      (f) => setQuestions(f.questions),
      () => setQuestions([]),
    );
  }, [props.formUrl]);
  const change = (key: number, part: Partial<Row>) =>
    setRows((all) => all.map((r) => (r.key === key ? { ...r, ...part } : r)));
  const save = async () => {
    const built = mappingOf(rows);
    if ('problem' in built) return setMessage({ error: true, text: built.problem });
    try {
      await api('PATCH', props.url, { fieldMapping: built.mapping, organicToSandbox: organic });
      setMessage({ error: false, text: 'Saved: the next Meta lead is mapped with it.' });
      props.saved();
    } catch (e) {
      setMessage({ error: true, text: saveErrorText(e) });
    }
  };
  const known = new Set(questions.map((q) => `question:${q.id}`));
  return (
    <div className="meta-mapping">
      <table>
        <caption>Field mapping of {props.sourceName}</caption>
        <thead>
          <tr>
            <th scope="col">Meta field</th>
            <th scope="col">Goes to</th>
            <th scope="col">
              <span className="visually-hidden">Remove</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => {
            const standard = r.field in meta.defaults;
            return (
              <tr key={r.key}>
                <td>
                  {standard ? (
                    <code>{r.field}</code>
                  ) : (
                    <input
                      aria-label="Meta field name"
                      value={r.field}
                      maxLength={200}
                      disabled={!canEdit}
                      onChange={(e) => change(r.key, { field: e.target.value })}
                    />
                  )}
                </td>
                <td>
                  <select
                    aria-label={`Target of ${r.field || 'the new field'}`}
                    value={r.target}
                    disabled={!canEdit}
                    onChange={(e) => change(r.key, { target: e.target.value })}
                  >
                    {LEAD_FIELDS.map(([v, label]) => (
                      <option key={v} value={v}>
                        {label}
                      </option>
                    ))}
                    {questions.map((q) => (
                      <option key={q.id} value={`question:${q.id}`}>
                        Question: {q.label}
                      </option>
                    ))}
                    {r.target.startsWith('question:') && !known.has(r.target) && (
                      <option value={r.target}>Question {r.target.slice(9)} (not on the form)</option>
                    )}
                    <option value="metadata">Metadata key…</option>
                    <option value="ignore">Ignore</option>
                  </select>{' '}
                  {r.target === 'metadata' && (
                    <input
                      aria-label={`Metadata key of ${r.field || 'the new field'}`}
                      value={r.metaKey}
                      maxLength={64}
                      disabled={!canEdit}
                      onChange={(e) => change(r.key, { metaKey: e.target.value })}
                    />
                  )}
                </td>
                <td>
                  {canEdit && !standard && (
                    <button type="button" onClick={() => setRows((all) => all.filter((x) => x.key !== r.key))}>
                      Remove
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <p className="hint">A field in no row is kept in the lead's metadata under its Meta name.</p>
      <label>
        <input type="checkbox" checked={organic} disabled={!canEdit} onChange={(e) => setOrganic(e.target.checked)} />
        {' Leads not from an ad (the Lead Ads Testing Tool) go to the sandbox'}
      </label>
      {canEdit && (
        <span className="toolbar">
          <button type="button" onClick={() => setRows((all) => [...all, rowOf('', 'ignore')])}>
            Add a field
          </button>
          <button type="button" onClick={() => void save()}>
            Save mapping
          </button>
        </span>
      )}
      {message && (
        <p role={message.error ? 'alert' : 'status'} className={message.error ? 'error' : undefined}>
          {message.text}
        </p>
      )}
    </div>
  );
}
