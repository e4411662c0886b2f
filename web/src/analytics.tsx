import type { ChartConfiguration } from 'chart.js';
import { useEffect, useMemo, useState } from 'react';
import type { WorkspaceAccess } from './api.ts';
import { type Analytics, AsOf, useAnalytics } from './analytics-live.tsx';
import { ReachSection } from './analytics-reach.tsx';
import { SourcesSection } from './analytics-sources.tsx';
import { ChartFigure, cssColor, DataTable, useColorScheme } from './chart-figure.tsx';
import { duration } from './format.ts';
import { LeadsLink, type UrlFilters } from './inbox-filters.tsx';
import { useQueryState } from './nav.ts';
import type { Status } from './api.ts';

// The Analytics page (/admin/<slug>/analytics; docs/DASHBOARD.md, "Analytics"): speed to lead
// first — the figure the product exists for — then the funnel, bookings and leads per day by
// outcome, for a period of the workspace's local days. Every chart has its numbers in a table,
// and links to the leads behind it: the inbox filtered to them (inbox-filters.tsx). The period
// applied and the Sandbox switch are in the address (?period=custom&from=…&to=…&sandbox=true).

type Day = Analytics['days'][number];

const PERIODS = [
  ['7d', 'Last 7 days'],
  ['30d', 'Last 30 days'],
  ['90d', 'Last 90 days'],
  ['custom', 'Custom'],
] as const;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The period an address names; a custom one without both days is the default. */
function readPeriod(q: URLSearchParams): { period: string; from: string; to: string } {
  const period = q.get('period') ?? '';
  const from = q.get('from') ?? '';
  const to = q.get('to') ?? '';
  if (period === 'custom' && DAY.test(from) && DAY.test(to)) return { period, from, to };
  return { period: PERIODS.some(([v]) => v === period && v !== 'custom') ? period : '30d', from: '', to: '' };
}
const CHANNELS = { whatsapp: 'WhatsApp', voice: 'Voice' } as const;

const pct = (n: number, of: number) => (of === 0 ? '—' : `${((100 * n) / of).toFixed(1)} %`);
const span = (s: number) =>
  s < 60 ? `${s} s` : s < 3600 ? `${s / 60} min` : s < 86_400 ? `${s / 3600} h` : `${s / 86_400} d`;
/** Bucket labels: "< 10 s", "10 s – 30 s", …, "≥ 1 d". */
const bucketLabels = (b: number[]) => [
  `< ${span(b[0]!)}`,
  ...b.slice(1).map((x, i) => `${span(b[i]!)} – ${span(x)}`),
  `≥ ${span(b.at(-1)!)}`,
];
const long = (s: number | null) => (s === null ? '—' : s < 3600 ? duration(s) : `${(s / 3600).toFixed(1)} h`);

function Stat({ label, value }: { label: string; value: string }) {
  return (
    <div className="stat">
      <span className="stat-value">{value}</span>
      <span className="stat-label">{label}</span>
    </div>
  );
}

export function AnalyticsPage({ workspace }: { workspace: WorkspaceAccess }) {
  const [query, setQuery] = useQueryState();
  // Keyed by its values: the Sandbox switch changing the address must not reset the form's draft.
  const appliedKey = JSON.stringify(readPeriod(query));
  const applied = useMemo(() => JSON.parse(appliedKey) as ReturnType<typeof readPeriod>, [appliedKey]);
  const sandbox = query.get('sandbox') === 'true';
  const apply = (p: { period: string; from: string; to: string }) =>
    setQuery({ period: p.period === '30d' ? undefined : p.period, from: p.from, to: p.to });
  // The form's draft: a custom period is applied by its button; back/forward show what they apply.
  const [period, setPeriod] = useState<string>(applied.period);
  const [from, setFrom] = useState(applied.from);
  const [to, setTo] = useState(applied.to);
  useEffect(() => {
    setPeriod(applied.period);
    if (applied.period === 'custom') setFrom(applied.from), setTo(applied.to);
  }, [applied]);
  const p = new URLSearchParams({ period: applied.period });
  if (applied.period === 'custom') p.set('from', applied.from), p.set('to', applied.to);
  if (sandbox) p.set('sandbox', 'true');
  const { data, asOf, error } = useAnalytics(workspace.slug, p.toString());
  const scheme = useColorScheme();

  const choosePeriod = (value: string) => {
    setPeriod(value);
    if (value !== 'custom') apply({ period: value, from: '', to: '' });
    else if (data) setFrom(from || data.from), setTo(to || data.to);
  };

  // biome-ignore lint/correctness/useExhaustiveDependencies: cssColor reads the colours of `scheme`
  const charts = useMemo(() => {
    if (!data) return null;
    const days = data.days.map((d) => d.day);
    const c = {
      accent: cssColor('--accent'),
      booked: cssColor('--booked'),
      unq: cssColor('--unq'),
      human: cssColor('--human'),
      conv: cssColor('--conv'),
      fresh: cssColor('--new'),
    };
    const labels = bucketLabels(data.speedBuckets);
    const histogram: ChartConfiguration = {
      type: 'bar',
      data: { labels, datasets: [{ label: 'Leads', data: data.speedHistogram, backgroundColor: c.accent }] },
      options: {
        plugins: { legend: { display: false } },
        scales: { y: { beginAtZero: true, ticks: { precision: 0 } } },
      },
    };
    const speedDays: ChartConfiguration = {
      type: 'line',
      data: {
        labels: days,
        datasets: [
          {
            label: 'p50 (s)',
            data: data.days.map((d) => d.speedP50Seconds),
            borderColor: c.accent,
            backgroundColor: c.accent,
            spanGaps: true,
          },
          {
            label: 'p90 (s)',
            data: data.days.map((d) => d.speedP90Seconds),
            borderColor: c.human,
            backgroundColor: c.human,
            borderDash: [6, 4],
            spanGaps: true,
          },
        ],
      },
      options: { scales: { y: { beginAtZero: true } } },
    };
    const bookingRate: ChartConfiguration = {
      type: 'line',
      data: {
        labels: days,
        datasets: [
          {
            label: 'Booking rate (%)',
            data: data.days.map((d) => (d.leads ? (100 * d.booked) / d.leads : null)),
            borderColor: c.booked,
            backgroundColor: c.booked,
            spanGaps: true,
          },
        ],
      },
      options: { plugins: { legend: { display: false } }, scales: { y: { beginAtZero: true, max: 100 } } },
    };
    const outcome = (label: string, key: keyof Day, color: string) => ({
      label,
      data: data.days.map((d) => d[key] as number),
      backgroundColor: color,
    });
    const perDay: ChartConfiguration = {
      type: 'bar',
      data: {
        labels: days,
        datasets: [
          outcome('Booked', 'booked', c.booked),
          outcome('Unqualified', 'unqualified', c.unq),
          outcome('Needs human', 'needsHuman', c.human),
          outcome('In conversation', 'inConversation', c.conv),
          outcome('New', 'new', c.fresh),
        ],
      },
      options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } } },
    };
    return { histogram, speedDays, bookingRate, perDay, labels };
  }, [data, scheme]);

  const t = data?.totals;
  type Filter = UrlFilters & { status?: Status };
  /**
   * A link to the period's leads of a figure (same days, same Sandbox switch): `sandbox` is always
   * in it, `false` too, or the inbox would apply its own default (sandbox leads while there is no
   * live lead) and list leads the figure did not count.
   */
  const link = (f: Filter, text: string | number, label?: string) =>
    data && (
      <LeadsLink
        slug={workspace.slug}
        {...(label ? { label } : {})}
        filter={{ from: data.from, to: data.to, sandbox: data.sandbox, ...f }}
      >
        {text}
      </LeadsLink>
    );
  const dayLink = (day: string) => link({ from: day, to: day }, day);
  const STEP_FILTERS: Record<string, Filter> = {
    Leads: {},
    Contacted: { reached: 'contacted' },
    Conversation: { reached: 'conversation' },
    Booked: { status: 'booked' },
    Unqualified: { status: 'unqualified' },
    'Needs human': { status: 'needs_human' },
  };
  // Outcomes are shares of all leads only: an operator may book or close a lead that never answered.
  const steps: Array<[string, number, number | null]> = t
    ? [
        ['Leads', t.leads, null],
        ['Contacted', t.contacted, t.leads],
        ['Conversation', t.conversation, t.contacted],
        ['Booked', t.booked, null],
        ['Unqualified', t.unqualified, null],
        ['Needs human', t.needsHuman, null],
      ]
    : [];
  return (
    <main className="analytics">
      <h1>Analytics</h1>
      <form
        className="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          apply({ period: 'custom', from, to });
        }}
      >
        {/* Labelled by id: a label wrapped around a select would name it with the options' text too. */}
        <label htmlFor="analytics-period">Period</label>
        <select id="analytics-period" value={period} onChange={(e) => choosePeriod(e.target.value)}>
          {PERIODS.map(([v, l]) => (
            <option key={v} value={v}>
              {l}
            </option>
          ))}
        </select>
        {period === 'custom' && (
          <>
            <label>
              From <input type="date" value={from} required onChange={(e) => setFrom(e.target.value)} />
            </label>
            <label>
              To <input type="date" value={to} required onChange={(e) => setTo(e.target.value)} />
            </label>
            <button type="submit">Apply</button>
          </>
        )}
        <label className="check">
          <input type="checkbox" checked={sandbox} onChange={(e) => setQuery({ sandbox: e.target.checked })} /> Sandbox
        </label>
        <span className="muted">Channel: {CHANNELS[workspace.channel]} (the workspace's one channel)</span>
      </form>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {!data || !charts || !t ? (
        !error && <p className="loading">Loading…</p>
      ) : (
        <>
          <p className="muted">
            Leads created from {data.from} to {data.to} (days in {data.timeZone})
            {data.sandbox ? ', sandbox leads included' : ', live leads only'}.{asOf && <AsOf at={asOf} />}
          </p>
          <section aria-labelledby="speed-h">
            <h2 id="speed-h">Speed to lead</h2>
            <div className="stats">
              <Stat label="p50, first contact after the lead arrived" value={duration(t.speedP50Seconds)} />
              <Stat label="p90" value={duration(t.speedP90Seconds)} />
              <Stat label="leads contacted" value={`${t.contacted} of ${t.leads}`} />
            </div>
            <div className="charts">
              <ChartFigure
                title="Speed to lead, distribution"
                config={charts.histogram}
                summary={
                  'Bar chart: leads by time from arrival to first contact. ' +
                  `${charts.labels.map((l, i) => `${l}: ${data.speedHistogram[i]}`).join('; ')}.`
                }
                leads={link({ reached: 'contacted' }, 'Show the contacted leads')}
                table={{
                  caption: 'Speed to lead, leads per bucket',
                  columns: ['Time to first contact', 'Leads'],
                  rows: charts.labels.map((l, i) => [l, data.speedHistogram[i]!]),
                }}
              />
              <ChartFigure
                title="Speed to lead per day, p50 and p90"
                config={charts.speedDays}
                summary={
                  'Line chart: median and 90th percentile of the time to first contact per day; ' +
                  `over the period p50 ${duration(t.speedP50Seconds)}, p90 ${duration(t.speedP90Seconds)}.`
                }
                leads={link({ reached: 'contacted' }, 'Show the contacted leads')}
                table={{
                  caption: 'Speed to lead per day (seconds)',
                  columns: ['Day', 'p50', 'p90', 'Contacted'],
                  rows: data.days.map((d) => [
                    dayLink(d.day),
                    d.speedP50Seconds ?? '—',
                    d.speedP90Seconds ?? '—',
                    d.contacted,
                  ]),
                }}
              />
            </div>
          </section>
          <ReachSection data={data} />
          <SourcesSection data={data} />
          <section aria-labelledby="funnel-h">
            <h2 id="funnel-h">Funnel</h2>
            <DataTable
              table={{
                caption: 'Funnel of the period: leads at each step, as a share of all leads and of the step before',
                columns: ['Step', 'Leads', 'Of all leads', 'Of the step before'],
                rows: steps.map(([name, n, prev]) => [
                  name,
                  link(STEP_FILTERS[name]!, n, `${n} leads: ${name}`),
                  pct(n, t.leads),
                  prev === null ? '—' : pct(n, prev),
                ]),
              }}
            />
          </section>
          <section aria-labelledby="handled-h">
            <h2 id="handled-h">Outcomes by who reached them</h2>
            <DataTable
              table={{
                caption:
                  'Outcomes reached by the AI alone, and after a person stepped in ' +
                  "(a hand-over or take-over in the lead's history)",
                columns: ['Outcome', 'AI alone', 'After a person', 'Share by the AI alone'],
                rows: (['booked', 'unqualified'] as const).map((o) => {
                  const name = o === 'booked' ? 'Booked' : 'Unqualified';
                  const { ai, person } = data.outcomes[o];
                  return [
                    name,
                    link({ status: o, handledBy: 'ai' }, ai, `${ai} ${name.toLowerCase()} by the AI alone`),
                    link(
                      { status: o, handledBy: 'person' },
                      person,
                      `${person} ${name.toLowerCase()} after a person stepped in`,
                    ),
                    pct(ai, ai + person),
                  ];
                }),
              }}
            />
          </section>
          <section aria-labelledby="bookings-h">
            <h2 id="bookings-h">Bookings</h2>
            <div className="stats">
              <Stat label="booking rate" value={pct(t.booked, t.leads)} />
              <Stat label="median time to booking" value={long(t.medianTimeToBookingSeconds)} />
            </div>
            <div className="charts">
              <ChartFigure
                title="Booking rate per day"
                config={charts.bookingRate}
                summary={
                  "Line chart: booked leads as a share of the day's leads; " +
                  `${pct(t.booked, t.leads)} over the period.`
                }
                leads={link({ status: 'booked' }, 'Show the booked leads')}
                table={{
                  caption: 'Booking rate per day',
                  columns: ['Day', 'Leads', 'Booked', 'Booking rate'],
                  rows: data.days.map((d) => [dayLink(d.day), d.leads, d.booked, pct(d.booked, d.leads)]),
                }}
              />
              <ChartFigure
                title="Leads per day by outcome"
                config={charts.perDay}
                summary={`Stacked bar chart: the leads of each day by their status now; ${t.leads} leads in all.`}
                leads={link({}, `Show the period's ${t.leads} leads`)}
                table={{
                  caption: 'Leads per day by outcome',
                  columns: ['Day', 'Booked', 'Unqualified', 'Needs human', 'In conversation', 'New', 'All'],
                  rows: data.days.map((d) => [
                    dayLink(d.day),
                    d.booked,
                    d.unqualified,
                    d.needsHuman,
                    d.inConversation,
                    d.new,
                    d.leads,
                  ]),
                }}
              />
            </div>
          </section>
        </>
      )}
    </main>
  );
}
