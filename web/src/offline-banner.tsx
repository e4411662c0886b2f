import { useLiveStatus } from './live.ts';

// Says when the page may be stale: the live stream is down (live.ts reconnects and the pages poll
// meanwhile), or the session ended. The live region is always there, empty while live, so that a
// screen reader announces the change when the text appears and when it goes.

export function OfflineBanner() {
  const live = useLiveStatus();
  const ended =
    live.state === 'ended' && live.reason === 'signed_out'
      ? 'Signed out.'
      : 'You no longer have access to this workspace.';
  const text = live.state === 'offline' ? 'Offline — reconnecting…' : live.state === 'ended' ? ended : '';
  return (
    <div role="status" aria-live="polite" className={text ? 'offline-banner' : 'offline-banner empty'}>
      {text}
    </div>
  );
}
