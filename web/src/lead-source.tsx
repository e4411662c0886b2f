import type { LeadPage } from './api.ts';
import { dateTime } from './format.ts';

// Two rows of the lead page's details (docs/DASHBOARD.md, "Lead page"): where the lead came from,
// in the API's words (the connected source's name, campaign/ad/form ids, the page a form was on),
// and the consent record with the exact text the lead agreed to when a form recorded one.

type Lead = LeadPage['lead'];

export function SourceRow({ lead }: { lead: Lead }) {
  const s = lead.source;
  return (
    <>
      <dt>Source</dt>
      <dd className="lead-source">
        {s.words}
        {s.sourceLeadId && (
          <>
            {' '}
            · lead id <code>{s.sourceLeadId}</code>
          </>
        )}
      </dd>
    </>
  );
}

export function ConsentRow({ lead }: { lead: Lead }) {
  const c = lead.consent;
  return (
    <>
      <dt>Consent</dt>
      <dd className="consent-record">
        {dateTime(c.at)}, IP {c.ip ?? 'unknown'}, {c.userAgent ?? 'no user agent'}
        {c.text && (
          <figure className="consent-text">
            <figcaption>Consent text, version {c.text.version}:</figcaption>
            {/* The exact words the lead ticked, as stored: plain text, never markup. */}
            <blockquote>{c.text.text}</blockquote>
          </figure>
        )}
      </dd>
    </>
  );
}
