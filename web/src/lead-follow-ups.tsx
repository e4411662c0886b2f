import { useRef, useState } from 'react';
import { api, ApiError, type LeadPage } from './api.ts';
import { dateTime } from './format.ts';
import { useFocusAfterRender } from './page-focus.ts';
import { attemptTime, describeContactEvent, dncWords, endWords, stepWords } from './follow-up-words.ts';

// The lead page's "Follow-ups" panel (docs/DASHBOARD.md): the attempts so far, the next one (when,
// in the operator's time and the workspace's; which kind; why), Call now / Skip / Stop follow-ups,
// why the plan ended, and the do-not-contact state with its button. The API decides; a refusal's
// reason is shown as it says it.

const REACHABLE = new Set(['new', 'in_conversation']);

export function FollowUps({
  page,
  base,
  canAct,
  onDone,
}: {
  page: LeadPage;
  base: string;
  canAct: boolean;
  /** After an action: the notice to show (it takes the focus), then the page reloads. */
  onDone: (notice: string) => void;
}) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const errorRef = useRef<HTMLParagraphElement>(null);
  const focusAfter = useFocusAfterRender();
  const l = page.lead;
  const plan = page.contactPlan;
  const next = plan?.next ?? null;
  const running = plan !== null && plan.endedAt === null;
  const dnc = l.doNotContact;
  // Only the newest page of the timeline is here; the count comes from the plan.
  const attempts = page.timeline.filter((e) => e.type === 'contact.attempted');
  const post = async (path: string, done: string, body?: unknown) => {
    setBusy(true);
    try {
      await api('POST', `${base}/${path}`, body);
      setError('');
      onDone(done);
    } catch (e) {
      setError(e instanceof ApiError ? e.body.message || e.message : (e as Error).message);
      // The button pressed was disabled while busy: focus would be lost.
      focusAfter(() => errorRef.current);
    } finally {
      setBusy(false);
    }
  };
  const stop = () => {
    if (confirm(`Stop follow-ups for ${l.name}? No further attempt is made; the lead stays ${l.status}.`))
      void post('contact-plan/stop', 'Follow-ups stopped.');
  };
  const doNotContact = () => {
    if (confirm(`Put ${l.phone} on the do-not-contact list? Nobody in this workspace calls or messages it again.`))
      void post('do-not-contact', 'The number is on the do-not-contact list.', {});
  };
  const otherZone = page.timeZone && page.timeZone !== Intl.DateTimeFormat().resolvedOptions().timeZone;
  // The lead's own clock, when it is one zone (a number of several zones shows none).
  const leadZone = plan?.leadTimeZones.length === 1 ? plan.leadTimeZones[0] : undefined;
  return (
    <section aria-labelledby="follow-ups-h" className="follow-ups-panel">
      <h2 id="follow-ups-h">Follow-ups</h2>
      {error && (
        <p role="alert" className="error" ref={errorRef} tabIndex={-1}>
          {error}
        </p>
      )}
      {dnc && (
        <p className="dnc">
          <span className="badge">Do not contact</span> Since {dateTime(dnc.at)}: {dncWords(dnc.source)}.
        </p>
      )}
      <p>
        {plan === null
          ? 'No attempt made or planned yet.'
          : `${plan.attempts} attempt${plan.attempts === 1 ? '' : 's'} so far` +
            `${plan.reachedAt ? `; reached ${dateTime(plan.reachedAt)}` : ''}.`}
      </p>
      {attempts.length > 0 && (
        <ol className="attempts" aria-label="Attempts">
          {attempts.map((e) => (
            <li key={e.id}>
              <time dateTime={e.at}>{dateTime(e.at)}</time> {describeContactEvent(e.type, e.data)}
            </li>
          ))}
        </ol>
      )}
      {plan?.inFlight && <p>An attempt is being made now.</p>}
      {next && running && (
        <p className="next-attempt">
          Next attempt: <strong>{stepWords(next.kind)}</strong> at{' '}
          <time dateTime={next.at}>{attemptTime(next.at)}</time>
          {otherZone && ` (${dateTime(next.at, page.timeZone ?? undefined)})`}
          {leadZone && `; the lead's time: ${dateTime(next.at, leadZone)} (${leadZone})`}
          {next.reason && ` — ${next.reason}`}
        </p>
      )}
      {plan?.endedAt && plan.endedReason && (
        <p>
          Follow-ups ended {dateTime(plan.endedAt)}: {endWords(plan.endedReason)}.
        </p>
      )}
      {canAct && (
        <div className="follow-up-actions">
          {REACHABLE.has(l.status) && !dnc && !plan?.inFlight && (
            <button
              type="button"
              disabled={busy}
              onClick={() => void post('contact-plan/call-now', 'Attempt queued now.')}
            >
              {l.channel === 'voice' ? 'Call now' : 'Send now'}
            </button>
          )}
          {running && next && next.kind !== 'give_up' && !plan?.inFlight && (
            <button type="button" disabled={busy} onClick={() => void post('contact-plan/skip', 'Attempt skipped.')}>
              Skip
            </button>
          )}
          {running && (
            <button type="button" className="danger" disabled={busy} onClick={stop}>
              Stop follow-ups
            </button>
          )}
          {!dnc && (
            <button type="button" className="danger" disabled={busy} onClick={doNotContact}>
              Do not contact
            </button>
          )}
        </div>
      )}
    </section>
  );
}
