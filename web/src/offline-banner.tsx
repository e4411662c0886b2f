import { useEffect, useRef, useState } from 'react';
import { useLiveStatus } from './live.ts';

// Says when the page may be stale: the live stream is down (live.ts reconnects and the pages poll
// meanwhile), or the session ended; and, for a few seconds, that it is live again. The live region
// is always there, so that a screen reader announces each change: an emptied region says nothing,
// so a reader would otherwise never learn that "Offline" no longer holds.

const BACK_ONLINE_MS = 4_000;

export function OfflineBanner() {
  const live = useLiveStatus();
  const [backOnline, setBackOnline] = useState(false);
  const wasOffline = useRef(false);
  useEffect(() => {
    if (live.state !== 'live') {
      wasOffline.current ||= live.state === 'offline';
      setBackOnline(false);
      return;
    }
    if (!wasOffline.current) return;
    wasOffline.current = false;
    setBackOnline(true);
    const timer = window.setTimeout(() => setBackOnline(false), BACK_ONLINE_MS);
    return () => clearTimeout(timer);
  }, [live.state]);
  const ended =
    live.state === 'ended' && live.reason === 'signed_out'
      ? 'Signed out.'
      : 'You no longer have access to this workspace.';
  const text =
    live.state === 'offline'
      ? 'Offline — reconnecting…'
      : live.state === 'ended'
        ? ended
        : backOnline
          ? 'Back online.'
          : '';
  const kind = !text ? ' empty' : backOnline && live.state === 'live' ? ' restored' : '';
  return (
    <div role="status" aria-live="polite" className={`offline-banner${kind}`}>
      {text}
    </div>
  );
}
