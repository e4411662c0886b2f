import { useEffect, useMemo, useRef } from 'react';
import { watchWorkspace } from './live-stream.ts';

export { useLiveStatus, watchWorkspace, type LiveStatus } from './live-stream.ts';

// A list page's requests overtake each other: a live refresh, a filter just changed, a search
// typed letter by letter. Whichever answers last must not be an earlier request's answer, or the
// page shows rows its filters exclude (the Logs page did, with Errors only ticked).

/** Tells which request's answer may still be shown. */
export interface Latest {
  /** A request that replaces the list: earlier requests' answers are dropped from now on. */
  begin(): () => boolean;
  /** A request that adds to the list (the next page): its answer counts while no replacing request began. */
  join(): () => boolean;
}

export function useLatest(): Latest {
  const latest = useRef(0);
  return useMemo(
    () => ({
      begin: () => {
        const n = ++latest.current;
        return () => n === latest.current;
      },
      join: () => {
        const n = latest.current;
        return () => n === latest.current;
      },
    }),
    [],
  );
}

/**
 * Calls `refresh` on each change of the workspace (of `kinds`, see watchWorkspace), at most every
 * 300 ms. A refresh still waiting when `refresh` changes (new filters) is cancelled: it would run
 * with the filters it was made with. `kinds` is a dependency: pass a constant array.
 */
export function useLiveRefresh(slug: string, refresh: () => void, kinds?: readonly string[]): void {
  const timer = useRef<number | undefined>(undefined);
  useEffect(() => {
    const stop = watchWorkspace(
      slug,
      () => {
        clearTimeout(timer.current);
        timer.current = window.setTimeout(refresh, 300);
      },
      kinds,
    );
    return () => {
      stop();
      clearTimeout(timer.current);
    };
  }, [slug, refresh, kinds]);
}
