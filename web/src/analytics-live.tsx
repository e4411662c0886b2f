import { useCallback, useEffect, useState } from 'react';
import { api, type Schemas } from './api.ts';
import { useLatest, useLiveRefresh } from './live.ts';

// The Analytics page's figures, kept true while the tab is open: refetched on each change of the
// workspace that can move them (the inbox's live refresh), with the time they were computed.

export type Analytics = Schemas['AdminAnalytics'];

/** What moves a figure: leads, their status, messages and calls (not follow-up plans or provider logs). */
const KINDS = ['lead.created', 'lead.status', 'lead.deleted', 'message', 'call'] as const;

/** The figures for the API query `params` (period, days, Sandbox), the last error, and when they were fetched. */
export function useAnalytics(slug: string, params: string) {
  const [data, setData] = useState<Analytics | null>(null);
  const [asOf, setAsOf] = useState<Date | null>(null);
  const [error, setError] = useState('');
  const latest = useLatest();
  const load = useCallback(() => {
    const current = latest.begin();
    api<Analytics>('GET', `/api/admin/workspaces/${slug}/analytics?${params}`).then(
      (d) => current() && (setData(d), setAsOf(new Date()), setError('')),
      (e: Error) => current() && setError(e.message),
    );
  }, [slug, params, latest]);
  useEffect(load, [load]);
  useLiveRefresh(slug, load, KINDS);
  return { data, asOf, error };
}

/** "As of 14:05:09": when the figures on screen were computed. */
export function AsOf({ at }: { at: Date }) {
  return (
    <>
      {' '}
      As of <time dateTime={at.toISOString()}>{at.toLocaleTimeString()}</time>.
    </>
  );
}
