import { useEffect, type AnchorHTMLAttributes, type MouseEvent } from 'react';
import { navigate } from './nav.ts';

// The one in-app link: a real anchor (its address can be copied, opened in a new tab, read by a
// screen reader as a link) whose plain left click changes the page without a reload. A click with
// a modifier (new tab or window, download) or with another button is left to the browser.

export type LinkProps = Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'> & { to: string; current?: boolean };

export function Link({ to, current, onClick, ...rest }: LinkProps) {
  const follow = (e: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    if (rest.target && rest.target !== '_self') return;
    e.preventDefault();
    navigate(to);
  };
  return <a {...rest} href={to} aria-current={current ? 'page' : rest['aria-current']} onClick={follow} />;
}

/** Goes to `to` once rendered, replacing the address it was shown at (back does not return to it). */
export function Redirect({ to }: { to: string }) {
  // In an effect, never during render: rendering must not change what is being rendered.
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}
