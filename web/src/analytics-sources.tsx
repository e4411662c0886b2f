import type { Schemas } from './api.ts';
import { DataTable } from './chart-figure.tsx';
import { duration } from './format.ts';

// The Analytics page's "By source" section (docs/DASHBOARD.md, "Analytics"; issue 37): where the
// period's leads came in — the API, the hosted form, the embed, a publishable key, Meta, Google,
// a generic webhook — with each source's speed to lead and how far its leads got. Its own file:
// the page's file holds the rest of the page.

type Analytics = Schemas['AdminAnalytics'];

/** The names the Form page uses for the same sources. */
export const SOURCE_LABELS: Record<string, string> = {
  api: 'API (secret key)',
  form: 'Hosted form',
  embed: 'Embedded form',
  publishable: 'Publishable key',
  meta: 'Meta Lead Ads',
  google: 'Google lead forms',
  webhook: 'Generic webhook',
};

const pct = (share: number) => `${(100 * share).toFixed(1)} %`;

export function SourcesSection({ data }: { data: Analytics }) {
  const rows = data.bySource;
  return (
    <section aria-labelledby="sources-h">
      <h2 id="sources-h">By source</h2>
      {rows.length === 0 ? (
        <p className="empty">No leads in this period.</p>
      ) : (
        // Focusable: at 390 px the table scrolls sideways, and a keyboard must reach what is hidden.
        <div className="table-scroll" role="region" aria-label="Leads by source" tabIndex={0}>
          <DataTable
            table={{
              caption: 'Leads, speed to lead and the funnel by where the leads came in',
              columns: ['Source', 'Leads', 'Speed to lead, p50', 'Contacted', 'Conversed', 'Booked'],
              rows: rows.map((s) => [
                SOURCE_LABELS[s.source] ?? s.source,
                s.leads,
                duration(s.speedP50Seconds),
                `${pct(s.contactedShare)} (${s.contacted})`,
                `${pct(s.conversationShare)} (${s.conversation})`,
                `${pct(s.bookedShare)} (${s.booked})`,
              ]),
            }}
          />
        </div>
      )}
    </section>
  );
}
