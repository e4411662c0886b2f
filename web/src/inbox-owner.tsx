import { useEffect, useState } from 'react';
import type { Inbox, InboxLead } from './api.ts';

// The inbox's ownership columns (docs/DASHBOARD.md, "The operator's day"): who has the lead, how
// long it has waited for a person (amber, then red, at the workspace's thresholds), and the unread
// mark. Colour is never the only signal: each state is also said in words.

/** The current time, every `ms` (the waiting times grow while the page is open). */
export function useNow(ms = 30_000): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const t = window.setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

export function OwnerCell({ lead }: { lead: InboxLead }) {
  const o = lead.owner;
  if (o.kind === 'ai') return <span className="owner owner-ai">AI</span>;
  if (o.kind === 'nobody') return <span className="owner owner-nobody">Nobody</span>;
  return (
    <span className="owner owner-operator" title={o.name}>
      {o.name}
    </span>
  );
}

export type WaitingLevel = 'ok' | 'amber' | 'red';

export function waitingLevel(minutes: number, t: Inbox['waiting']): WaitingLevel {
  return minutes >= t.redMinutes ? 'red' : minutes >= t.amberMinutes ? 'amber' : 'ok';
}

export function WaitingCell({ lead, thresholds, now }: { lead: InboxLead; thresholds: Inbox['waiting']; now: number }) {
  if (!lead.waitingSince) return <span className="muted">—</span>;
  const minutes = Math.max(0, Math.floor((now - Date.parse(lead.waitingSince)) / 60_000));
  const level = waitingLevel(minutes, thresholds);
  const text = minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  const over = level === 'red' ? thresholds.redMinutes : level === 'amber' ? thresholds.amberMinutes : null;
  const said = over === null ? '' : ` (over ${over} min)`;
  return (
    <time dateTime={lead.waitingSince} className={`waiting waiting-${level}`}>
      {level !== 'ok' && <span aria-hidden="true">{level === 'red' ? '▲ ' : '● '}</span>}
      {text}
      <span className="visually-hidden">{said}</span>
    </time>
  );
}

/** The dot before an unread lead's name, said as "Unread:" to screen readers. */
export function UnreadMark({ lead }: { lead: InboxLead }) {
  if (!lead.unread) return null;
  return (
    <>
      <span className="unread-dot" aria-hidden="true" />
      <span className="visually-hidden">Unread: </span>
    </>
  );
}

/** The lead page's line about who has the lead. */
export function LeadOwner({ owner }: { owner: InboxLead['owner'] }) {
  const text =
    owner.kind === 'ai'
      ? 'With the AI.'
      : owner.kind === 'nobody'
        ? 'Waiting for a person: nobody has taken it yet.'
        : `Taken over by ${owner.name}.`;
  return <p className={`lead-owner owner-${owner.kind}`}>{text}</p>;
}
