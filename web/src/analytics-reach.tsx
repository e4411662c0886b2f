import type { ChartConfiguration } from 'chart.js';
import { useMemo } from 'react';
import type { Schemas } from './api.ts';
import { ChartFigure, cssColor, useColorScheme } from './chart-figure.tsx';
import { duration } from './format.ts';

// The Analytics page's "Reaching leads" section (docs/DASHBOARD.md, "Analytics"; issue 36): on
// which attempt the leads were reached (they answered a call or replied), how long reaching them
// took beside how long the first contact took, and the share of contacted leads the contact plan
// gave up on. Its own file: the page's file holds the rest of the page.

type Analytics = Schemas['AdminAnalytics'];

const ATTEMPTS = ['1st attempt', '2nd attempt', '3rd attempt', '4th or later'];
const pct = (n: number | null) => (n === null ? '—' : `${(100 * n).toFixed(1)} %`);
/** Reaching a lead may take days: hours beyond one. */
const long = (s: number | null) => (s === null || s < 3600 ? duration(s) : `${(s / 3600).toFixed(1)} h`);

function Stat({ label, value }: { label: string; value: string }) {
  return (
    <div className="stat">
      <span className="stat-value">{value}</span>
      <span className="stat-label">{label}</span>
    </div>
  );
}

export function ReachSection({ data }: { data: Analytics }) {
  const { reach, totals } = data;
  const scheme = useColorScheme();
  // biome-ignore lint/correctness/useExhaustiveDependencies: cssColor reads the colours of `scheme`
  const chart = useMemo<ChartConfiguration>(
    () => ({
      type: 'bar',
      data: {
        labels: ATTEMPTS,
        datasets: [{ label: 'Leads reached', data: reach.byAttempt, backgroundColor: cssColor('--conv') }],
      },
      options: {
        plugins: { legend: { display: false } },
        scales: { y: { beginAtZero: true, ticks: { precision: 0 } } },
      },
    }),
    [reach, scheme],
  );
  return (
    <section aria-labelledby="reach-h">
      <h2 id="reach-h">Reaching leads</h2>
      <div className="stats">
        <Stat label="p50, time to first reach (answered or replied)" value={long(reach.reachP50Seconds)} />
        <Stat label="p90, time to first reach" value={long(reach.reachP90Seconds)} />
        <Stat label="p50, time to first contact" value={duration(totals.speedP50Seconds)} />
        <Stat label="leads reached" value={`${reach.reached} of ${totals.leads}`} />
        <Stat
          label={`never reached: ${reach.neverReached} of ${totals.contacted} contacted, plan ended`}
          value={pct(reach.neverReachedShare)}
        />
      </div>
      <div className="charts">
        <ChartFigure
          title="Leads reached by attempt"
          config={chart}
          summary={
            'Bar chart: leads reached on each attempt. ' +
            `${ATTEMPTS.map((a, i) => `${a}: ${reach.byAttempt[i] ?? 0}`).join('; ')}.`
          }
          table={{
            caption: 'Leads reached by attempt number',
            columns: ['Reached on', 'Leads', 'Of the leads reached'],
            rows: ATTEMPTS.map((a, i) => {
              const n = reach.byAttempt[i] ?? 0;
              return [a, n, reach.reached === 0 ? '—' : pct(n / reach.reached)];
            }),
          }}
        />
      </div>
    </section>
  );
}
