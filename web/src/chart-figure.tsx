import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  type ChartConfiguration,
} from 'chart.js';
import { useEffect, useId, useRef, useState, type ReactNode } from 'react';

// One chart of the Analytics page: Chart.js draws it on a canvas (bundled by Vite; it injects no
// stylesheet, so the page's Content-Security-Policy holds), the canvas carries a text
// alternative, and the same numbers are in a table that screen readers always read and anyone
// can show with "Show as table". Colours come from the page's CSS variables, so the chart
// follows light and dark like the rest of the page.

Chart.register(
  BarController,
  BarElement,
  CategoryScale,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  Legend,
);

/** The value of a CSS variable of the page (light or dark, as the system chooses). */
export const cssColor = (name: string) =>
  getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#57606a';

/** Re-renders when the system switches between light and dark. */
export function useColorScheme(): string {
  const query = window.matchMedia('(prefers-color-scheme: dark)');
  const [scheme, setScheme] = useState(query.matches ? 'dark' : 'light');
  useEffect(() => {
    const on = (e: MediaQueryListEvent) => setScheme(e.matches ? 'dark' : 'light');
    query.addEventListener('change', on);
    return () => query.removeEventListener('change', on);
  }, [query]);
  return scheme;
}

export interface TableData {
  caption: string;
  columns: string[];
  /** Cells; a link (to the leads behind a number) where the page gives one. */
  rows: Array<Array<string | number | ReactNode>>;
}

export function DataTable({ table, hidden }: { table: TableData; hidden?: boolean }) {
  return (
    <table className={hidden ? 'visually-hidden' : 'chart-table'}>
      <caption>{table.caption}</caption>
      <thead>
        <tr>
          {table.columns.map((c) => (
            <th key={c} scope="col">
              {c}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {table.rows.map((r, i) => (
          <tr key={i}>
            {r.map((v, j) =>
              j === 0 ? (
                <th key={j} scope="row">
                  {v}
                </th>
              ) : (
                <td key={j}>{v}</td>
              ),
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function ChartFigure({
  title,
  summary,
  config,
  table,
  leads,
  children,
}: {
  title: string;
  /** A link to the leads the chart counts (the inbox filtered to them). */
  leads?: ReactNode;
  /** The chart's text alternative: what it shows, in a sentence. */
  summary: string;
  config: ChartConfiguration;
  table: TableData;
  children?: ReactNode;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [showTable, setShowTable] = useState(false);
  const id = useId();
  const scheme = useColorScheme();
  // biome-ignore lint/correctness/useExhaustiveDependencies: cssColor reads the colours of `scheme`
  useEffect(() => {
    if (!canvas.current) return;
    Chart.defaults.color = cssColor('--muted');
    Chart.defaults.borderColor = cssColor('--line');
    const chart = new Chart(canvas.current, {
      ...config,
      options: { animation: false, maintainAspectRatio: false, ...config.options },
    });
    return () => chart.destroy();
  }, [config, scheme]);
  return (
    <figure className="chart" aria-labelledby={`${id}-t`}>
      <figcaption id={`${id}-t`}>{title}</figcaption>
      {children}
      <div className="chart-canvas">
        <canvas ref={canvas} role="img" aria-label={summary} />
      </div>
      <button type="button" className="link" aria-expanded={showTable} onClick={() => setShowTable((s) => !s)}>
        {showTable ? 'Hide table' : 'Show as table'}
      </button>
      {leads && <p className="chart-leads">{leads}</p>}
      <DataTable table={table} hidden={!showTable} />
    </figure>
  );
}
