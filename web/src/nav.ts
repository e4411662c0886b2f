import { useMemo, useSyncExternalStore } from 'react';

// Client-side navigation under /admin with the History API. The address is the page's state: the
// path says which page, the query what it shows (filters, tab, search, sort), so a reload, a
// bookmark or a shared link opens the same view and back/forward step through the views. Every
// change of the address goes through here, and every component reads it with useLocation.

const listeners = new Set<() => void>();
const notify = () => {
  for (const listener of listeners) listener();
};
addEventListener('popstate', notify);

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

/**
 * Goes to `to` (a path with its query) inside the page. `replace`: the current history entry is
 * changed instead of a new one added; for typing (one entry per search, not per key) and redirects.
 */
export function navigate(to: string, { replace = false }: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  notify();
}

// A string snapshot: the same address is the same value, so nothing re-renders for nothing.
const snapshot = () => location.pathname + location.search;

/**
 * The address's path and query, following navigate() and back/forward. The same address gives the
 * same objects, so they can be effects' dependencies.
 */
export function useLocation(): { path: string; query: URLSearchParams; search: string } {
  const href = useSyncExternalStore(subscribe, snapshot);
  return useMemo(() => {
    const at = href.indexOf('?');
    const search = at < 0 ? '' : href.slice(at);
    return { path: at < 0 ? href : href.slice(0, at), query: new URLSearchParams(search), search };
  }, [href]);
}

/**
 * This path with `changes` applied to its query (undefined, '' or false: the parameter is
 * left out, so a default never shows in the address).
 */
export function withQuery(
  query: URLSearchParams,
  changes: Record<string, string | boolean | undefined | null>,
): string {
  const next = new URLSearchParams(query);
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined || v === null || v === '' || v === false) next.delete(k);
    else next.set(k, v === true ? 'true' : v);
  }
  const q = next.toString();
  return `${location.pathname}${q ? `?${q}` : ''}`;
}

/**
 * The current page's query parameters and a setter: choices (a tab, a select, a switch) add a
 * history entry, so back returns to the view before; typing (`replace`) changes the current one.
 */
export function useQueryState(): [
  URLSearchParams,
  (changes: Record<string, string | boolean | undefined | null>, opts?: { replace?: boolean }) => void,
] {
  const { query } = useLocation();
  const set = (changes: Record<string, string | boolean | undefined | null>, opts?: { replace?: boolean }) =>
    navigate(withQuery(new URLSearchParams(location.search), changes), opts);
  return [query, set];
}
