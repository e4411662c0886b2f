import { useCallback, useEffect, useRef, useState } from 'react';

// After a navigation inside the page (the History API: no page load), focus would stay on the
// link that was followed, or on nothing, and a screen reader would not hear that the page changed.
// The new page's heading takes focus instead, as a page load would begin there.

const HEADING = 'main h1';

/** Moves focus to the heading of the page now shown, on each change of `path` after the first. */
export function useFocusHeadingOnNavigate(path: string): void {
  const first = useRef(true);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `path` is the trigger: each navigation moves focus once
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    // A page may show its heading only once its data has come: watch for it, a few seconds at most.
    let frame = 0;
    const until = performance.now() + 5_000;
    const tryFocus = () => {
      const heading = document.querySelector<HTMLElement>(HEADING);
      if (heading) return focusHeading(heading);
      if (performance.now() < until) frame = requestAnimationFrame(tryFocus);
    };
    tryFocus();
    return () => cancelAnimationFrame(frame);
  }, [path]);
}

/** The skip link's target: the page's heading (or its main region). */
export function focusMain(): void {
  const target = document.querySelector<HTMLElement>(HEADING) ?? document.querySelector<HTMLElement>('main');
  if (target) focusHeading(target);
}

function focusHeading(el: HTMLElement): void {
  if (!el.hasAttribute('tabindex')) el.setAttribute('tabindex', '-1');
  el.focus();
}

/**
 * After an action the button pressed is often gone (the page reloads its data) or disabled while
 * busy, and focus would fall back to the page's body: a keyboard or screen-reader user would start
 * again from the top. The function returned names where focus goes instead (the action's notice,
 * its error, the next control); it moves there once React has shown the change, since a notice is
 * hidden while empty and an error exists only once it is set.
 */
export function useFocusAfterRender(): (target: () => HTMLElement | null) => void {
  const pending = useRef<(() => HTMLElement | null) | null>(null);
  const [, rerender] = useState(0);
  useEffect(() => {
    const target = pending.current;
    pending.current = null;
    target?.()?.focus();
  });
  return useCallback((target: () => HTMLElement | null) => {
    pending.current = target;
    rerender((n) => n + 1);
  }, []);
}
