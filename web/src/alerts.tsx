import { useEffect, useRef, useState } from 'react';
import { api, watchWorkspace, type Inbox, type InboxLead, type WorkspaceAccess } from './api.ts';

// Alerts when a lead needs a person (docs/DASHBOARD.md, "The operator's day"): every open page of
// the workspace counts the hand-offs nobody has taken in the tab's title ("(2) …"), and for each new
// one plays a short tone (off by default, per browser) and shows a browser notification (if this
// browser allowed them). A hand-off rings only if nobody took it within SETTLE_MS (Chatwoot's
// convention): one taken at once, or one an operator is already handling, stays quiet.

export const SETTLE_MS = 5_000;
const SOUND_KEY = 'leadintake.alertSound';
/** The page shows these statuses' changes; owner changes come as `lead.status` too (migration 040). */
const KINDS = ['lead.status', 'lead.created', 'lead.deleted'] as const;

export const soundOn = () => localStorage.getItem(SOUND_KEY) === 'on';

let audio: AudioContext | null = null;
/** Two short tones made by the Web Audio API (no audio file). Needs a user gesture once: the toggle. */
export function playTone(): void {
  try {
    audio ??= new AudioContext();
    void audio.resume();
    const t = audio.currentTime;
    for (const [i, hz] of [880, 660].entries()) {
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.frequency.value = hz;
      gain.gain.setValueAtTime(0.0001, t + i * 0.18);
      gain.gain.exponentialRampToValueAtTime(0.2, t + i * 0.18 + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, t + i * 0.18 + 0.16);
      osc.connect(gain).connect(audio.destination);
      osc.start(t + i * 0.18);
      osc.stop(t + i * 0.18 + 0.17);
    }
  } catch {
    // No audio in this browser: the title and the notification remain.
  }
}

/** The title with "(n) " in front (or without it for 0), whatever title the page set meanwhile. */
function withCount(title: string, n: number): string {
  const bare = title.replace(/^\(\d+\+?\) /, '');
  return n > 0 ? `(${n}) ${bare}` : bare;
}

const unowned = (inbox: Inbox): InboxLead[] => inbox.leads.filter((l) => l.owner.kind === 'nobody');

/**
 * Watches the workspace for hand-offs nobody has taken. Renders a polite live region (the count,
 * for screen readers) whose data attributes say what is pending and how often it rang.
 */
export function HandOffAlerts({ workspace }: { workspace: WorkspaceAccess }) {
  const [alerted, setAlerted] = useState<string[]>([]);
  const [pending, setPending] = useState(0);
  const [rings, setRings] = useState(0);
  const state = useRef({ seen: new Map<string, 'pending' | 'alerted'>(), first: true });
  useEffect(() => {
    let stopped = false;
    let busy = false;
    let again = false;
    const timers = new Set<number>();
    // Hand-offs whose settle window has passed: kept until a check has looked at them (a check
    // asked for while another runs is folded into the next one).
    const due = new Set<string>();
    const { seen } = state.current;
    seen.clear();
    state.current.first = true;
    const publish = () => {
      setAlerted([...seen].filter(([, s]) => s === 'alerted').map(([id]) => id));
      setPending([...seen.values()].filter((s) => s === 'pending').length);
    };
    // One request at a time; changes meanwhile ask for one more.
    const check = async () => {
      if (busy) {
        again = true;
        return;
      }
      busy = true;
      try {
        const slug = encodeURIComponent(workspace.slug);
        const url = `/api/admin/workspaces/${slug}/leads?sort=waiting&sandbox=true&limit=100`;
        const inbox = await api<Inbox>('GET', url);
        if (stopped) return;
        const waiting = new Map(unowned(inbox).map((l) => [l.id, l]));
        for (const id of [...seen.keys()]) if (!waiting.has(id)) seen.delete(id);
        for (const id of [...due]) if (!seen.has(id)) due.delete(id);
        const ring: InboxLead[] = [];
        for (const [id, lead] of waiting) {
          const was = seen.get(id);
          if (state.current.first) seen.set(id, 'alerted');
          else if (was === undefined) {
            seen.set(id, 'pending');
            const timer = window.setTimeout(() => {
              timers.delete(timer);
              due.add(id);
              void check();
            }, SETTLE_MS);
            timers.add(timer);
          } else if (was === 'pending' && due.has(id)) {
            seen.set(id, 'alerted');
            due.delete(id);
            ring.push(lead);
          }
        }
        state.current.first = false;
        publish();
        if (ring.length > 0) notify(ring);
        if (ring.length > 0) setRings((n) => n + 1);
      } catch {
        // Signed out or offline: the next change or reconnection checks again.
      } finally {
        busy = false;
        if (again && !stopped) {
          again = false;
          void check();
        }
      }
    };
    void check();
    const stop = watchWorkspace(workspace.slug, () => void check(), KINDS);
    return () => {
      stopped = true;
      stop();
      for (const t of timers) clearTimeout(t);
    };
  }, [workspace.slug]);
  useEffect(() => {
    const apply = () => {
      const t = withCount(document.title, alerted.length);
      if (t !== document.title) document.title = t;
    };
    apply();
    // A page that sets its own title keeps the count in front of it.
    const title = document.querySelector('title');
    const watch = title ? new MutationObserver(apply) : null;
    if (title) watch!.observe(title, { childList: true, characterData: true, subtree: true });
    return () => {
      watch?.disconnect();
      document.title = withCount(document.title, 0);
    };
  }, [alerted.length]);
  const n = alerted.length;
  return (
    <p
      className="visually-hidden"
      role="status"
      data-alerts-pending={pending}
      data-alerts-rings={rings}
      data-alerts-count={n}
    >
      {n === 0 ? '' : n === 1 ? '1 lead needs a person.' : `${n} leads need a person.`}
    </p>
  );
}

function notify(leads: InboxLead[]): void {
  if (soundOn()) playTone();
  if (!('Notification' in window) || Notification.permission !== 'granted') return;
  const title = leads.length === 1 ? 'A lead needs a person' : `${leads.length} leads need a person`;
  try {
    const body = leads
      .map((l) => l.name)
      .join(', ')
      .slice(0, 200);
    const n = new Notification(title, { body, tag: 'leadintake-hand-off' });
    n.onclick = () => {
      window.focus();
      n.close();
    };
  } catch {
    // Some browsers allow notifications only from a service worker: the title and sound remain.
  }
}

/** The inbox's alert switches: the tone (this browser) and browser notifications (asked on the click). */
export function AlertControls() {
  const [sound, setSound] = useState(soundOn);
  const supported = typeof window !== 'undefined' && 'Notification' in window;
  const [permission, setPermission] = useState(supported ? Notification.permission : 'denied');
  return (
    <div className="alert-controls">
      <label className="check">
        <input
          type="checkbox"
          checked={sound}
          onChange={(e) => {
            localStorage.setItem(SOUND_KEY, e.target.checked ? 'on' : 'off');
            setSound(e.target.checked);
            if (e.target.checked) playTone();
          }}
        />{' '}
        Sound on hand-off
      </label>
      {supported && permission === 'default' && (
        <button
          type="button"
          className="quiet"
          onClick={() => {
            void Notification.requestPermission().then(setPermission);
          }}
        >
          Enable notifications
        </button>
      )}
    </div>
  );
}
