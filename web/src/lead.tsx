import { useCallback, useEffect, useRef, useState } from 'react';
import { api, ApiError, watchWorkspace, type LeadPage, type WorkspaceAccess } from './api.ts';
import { dateTime } from './format.ts';
import { StatusBadge } from './inbox.tsx';
import { LeadOwner } from './inbox-owner.tsx';
import { ProviderTraffic, Thread, Timeline } from './lead-history.tsx';
import { Link } from './link.tsx';
import { useLatest } from './live.ts';
import { navigate } from './nav.ts';
import { useFocusAfterRender } from './page-focus.ts';
import { LeadNotes } from './lead-notes.tsx';
import { FollowUps } from './lead-follow-ups.tsx';
import { ReplyComposer } from './reply-composer.tsx';
import { ConsentRow, SourceRow } from './lead-source.tsx';

// The lead page (/admin/<slug>/leads/<id>): who, what happened, the WhatsApp thread or the calls,
// the booking, the provider traffic (collapsed), and the operator's actions. Buttons the role may
// not use are not shown; the API refuses them anyway.

export function LeadView({ workspace, leadId }: { workspace: WorkspaceAccess; leadId: string }) {
  const [page, setPage] = useState<LeadPage | null>(null);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  // After an action, focus moves to its notice or error (page-focus.ts says why).
  const noticeRef = useRef<HTMLParagraphElement>(null);
  const errorRef = useRef<HTMLParagraphElement>(null);
  const focusAfter = useFocusAfterRender();
  const base = `/api/admin/workspaces/${workspace.slug}/leads/${leadId}`;
  // Set while this page deletes the lead: the deletion's own live event must not refetch it.
  const deleting = useRef(false);
  // Two changes a moment apart start two loads: only the later one's answer is shown, whichever
  // comes back last.
  const latest = useLatest();
  const load = useCallback(() => {
    if (deleting.current) return;
    const current = latest.begin();
    api<LeadPage>('GET', base).then(
      (p) => {
        if (!current()) return;
        setPage(p);
        setError('');
      },
      (e: Error) => {
        if (current()) setError(e.message);
      },
    );
  }, [base, latest]);
  useEffect(load, [load]);
  useEffect(
    () =>
      watchWorkspace(workspace.slug, (ids) => {
        if (!ids || ids.includes(leadId)) load();
      }),
    [workspace.slug, leadId, load],
  );
  const can = (p: 'leads.act' | 'leads.delete') => workspace.permissions.includes(p);
  /** After any action of the page: its notice (focused unless `keepFocus`), then the page reloads. */
  const done = (message: string, keepFocus = false) => {
    setNotice(message);
    if (!keepFocus) focusAfter(() => noticeRef.current);
    load();
  };
  const act = async (path: string, body: unknown, message: string) => {
    try {
      await api('POST', `${base}/${path}`, body);
      done(message);
    } catch (e) {
      // A 409 of Take over says who took the lead ("Taken over by Ada a moment ago.").
      setError(e instanceof ApiError && e.body.message ? e.body.message : (e as Error).message);
      focusAfter(() => errorRef.current);
    }
  };
  if (!page)
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
  const l = page.lead;
  const remove = async () => {
    if (
      !confirm(
        `Delete lead ${l.name} (${l.phone})? ` +
          'Their conversation, calls and personal data are erased; this cannot be undone.',
      )
    )
      return;
    deleting.current = true;
    try {
      await api('DELETE', base);
    } catch (e) {
      deleting.current = false;
      setError((e as Error).message);
      focusAfter(() => errorRef.current);
      return;
    }
    // Replaced: back must not return to the page of a lead that no longer exists.
    navigate(`/admin/${workspace.slug}/leads`, { replace: true });
  };
  return (
    <main className="lead">
      <p>
        <Link to={`/admin/${workspace.slug}/leads`}>← Leads</Link>
      </p>
      <h1>
        {l.name} <StatusBadge status={l.status} />
        {!l.livemode && <span className="badge badge-sandbox">Sandbox</span>}
      </h1>
      {error && (
        <p role="alert" className="error" ref={errorRef} tabIndex={-1}>
          {error}
        </p>
      )}
      <p role="status" className="notice" ref={noticeRef} tabIndex={-1}>
        {notice}
      </p>
      <LeadOwner owner={page.owner} />
      {(can('leads.act') || can('leads.delete')) && (
        <section aria-labelledby="actions-h" className="actions">
          <h2 id="actions-h">Actions</h2>
          {can('leads.act') &&
            (kept(l.status)
              ? page.owner.kind !== 'operator'
              : l.status !== 'needs_human' || page.owner.kind === 'nobody') && (
              <button
                type="button"
                onClick={() =>
                  act(
                    'take-over',
                    undefined,
                    kept(l.status)
                      ? `Taken over: the lead stays ${l.status}.`
                      : 'Taken over: the agent sends nothing more.',
                  )
                }
              >
                Take over
              </button>
            )}
          {/* A kept outcome that someone took over is handed back; the status stays either way. */}
          {can('leads.act') && (l.status === 'needs_human' || (kept(l.status) && page.owner.kind === 'operator')) && (
            <button
              type="button"
              onClick={() =>
                act(
                  'resume',
                  undefined,
                  kept(l.status) ? `Handed back: the lead stays ${l.status}.` : 'Handed back to the AI.',
                )
              }
            >
              Resume AI
            </button>
          )}
          {can('leads.delete') && (
            <button type="button" className="danger" onClick={remove}>
              Delete lead
            </button>
          )}
          {can('leads.act') && (l.status === 'needs_human' || l.status === 'in_conversation' || l.status === 'new') && (
            <form
              className="outcome"
              onSubmit={(e) => {
                e.preventDefault();
                const f = new FormData(e.currentTarget);
                const outcome = String(f.get('outcome'));
                if (confirm(`Set ${l.name} to ${outcome}?`))
                  void act('outcome', { outcome, note: f.get('note') }, `Outcome set: ${outcome}.`);
              }}
            >
              <label>
                Outcome{' '}
                <select name="outcome" defaultValue="booked">
                  <option value="booked">Booked</option>
                  <option value="unqualified">Unqualified</option>
                </select>
              </label>
              <label>
                Note or reason <input name="note" required maxLength={2000} />
              </label>
              <button type="submit">Set outcome</button>
            </form>
          )}
        </section>
      )}
      <FollowUps page={page} base={base} canAct={can('leads.act')} onDone={done} />
      <div className="columns">
        <section aria-labelledby="who-h">
          <h2 id="who-h">Details</h2>
          <dl>
            <dt>Phone</dt>
            <dd>{l.phone}</dd>
            <dt>E-mail</dt>
            <dd>{l.email ?? '—'}</dd>
            <dt>Goal</dt>
            <dd>{l.goal ?? '—'}</dd>
            <dt>Channel</dt>
            <dd>{l.channel === 'whatsapp' ? 'WhatsApp' : 'Voice'}</dd>
            <dt>Created</dt>
            <dd>{dateTime(l.createdAt)}</dd>
            <SourceRow lead={l} />
            <dt>Created by</dt>
            <dd>
              {l.apiKey ? (
                <>
                  API key {l.apiKey.name} (<code>{l.apiKey.prefix}…</code>)
                </>
              ) : (
                '—'
              )}
            </dd>
            {l.qualificationNotes && (
              <>
                <dt>Notes</dt>
                <dd>{l.qualificationNotes}</dd>
              </>
            )}
            {l.agentNotes && (
              <>
                <dt>Agent's notes</dt>
                <dd className="agent-notes">{l.agentNotes}</dd>
              </>
            )}
            <ConsentRow lead={l} />
            {l.answers.map((a) => (
              <FragmentRow key={`a-${a.id}`} term={a.label ?? a.id} value={a.value} />
            ))}
            {l.formAnswers.map((f) => (
              <FragmentRow
                key={`f-${f.id}`}
                term={f.label ?? f.id}
                value={typeof f.value === 'string' ? f.value : JSON.stringify(f.value)}
              />
            ))}
            {Object.keys(l.metadata).length > 0 && (
              <>
                <dt>Metadata</dt>
                <dd>
                  <code>{JSON.stringify(l.metadata)}</code>
                </dd>
              </>
            )}
          </dl>
          <h2>Booking</h2>
          {l.bookingStart ? (
            <p>
              {dateTime(l.bookingStart, page.timeZone ?? undefined)} (
              {new Date(l.bookingStart).toISOString().slice(0, 16).replace('T', ' ')} UTC), booking {l.bookingUid}
            </p>
          ) : (
            <p>No booking.</p>
          )}
          <LeadNotes base={base} canWrite={can('leads.act')} />
        </section>
        <section aria-labelledby="conv-h">
          {l.channel === 'whatsapp' ? (
            <>
              <h2 id="conv-h">WhatsApp conversation</h2>
              {page.whatsappWindow && (
                <p className="window">
                  {page.whatsappWindow.open
                    ? `24-hour window open until ${dateTime(page.whatsappWindow.until!)}`
                    : '24-hour window closed: only the approved template can be sent.'}
                </p>
              )}
              <Thread base={base} messages={page.messages} olderCursor={page.messagesOlderCursor} />
              {can('leads.act') && page.whatsappWindow && (l.status === 'needs_human' || kept(l.status)) && (
                <ReplyComposer base={base} window={page.whatsappWindow} onSent={done} />
              )}
            </>
          ) : (
            <>
              <h2 id="conv-h">Calls</h2>
              {page.calls.length === 0 && <p>No call yet.</p>}
              {page.calls.map((c) => (
                <article key={c.providerCallId} className="call">
                  <h3>
                    Call {c.startedAt ? dateTime(c.startedAt) : ''} — {c.status}
                  </h3>
                  <p>
                    {c.durationSeconds !== null ? `${c.durationSeconds} s` : ''} {c.endedReason ?? ''}
                  </p>
                  {c.summary && <p>{c.summary}</p>}
                  {/* biome-ignore lint/a11y/useMediaCaption: the transcript is shown below it */}
                  {c.recordingUrl && <audio controls preload="none" src={c.recordingUrl} aria-label="Call recording" />}
                  {c.transcriptTurns.length > 0 && (
                    <ol className="transcript" aria-label="Transcript">
                      {c.transcriptTurns.map((t, i) => (
                        <li key={i} className={t.speaker === 'Lead' ? 'turn turn-lead' : 'turn turn-assistant'}>
                          <b>{t.speaker === 'Lead' ? 'Lead' : 'Assistant'}:</b> {t.text}
                        </li>
                      ))}
                    </ol>
                  )}
                </article>
              ))}
            </>
          )}
          <h2>Timeline</h2>
          <Timeline base={base} events={page.timeline} olderCursor={page.timelineOlderCursor} />
          <ProviderTraffic base={base} />
        </section>
      </div>
    </main>
  );
}

/** Outcomes a take-over keeps (the API's rule too): the person handles the lead, the status stays. */
const kept = (status: string) => status === 'booked' || status === 'unqualified';

function FragmentRow({ term, value }: { term: string; value: string }) {
  return (
    <>
      <dt>{term}</dt>
      <dd>{value}</dd>
    </>
  );
}
