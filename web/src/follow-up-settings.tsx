import { Fragment, useState } from 'react';
import type { AgentData } from './settings-types.ts';

// The Agent page's "Follow-ups" section (docs/DASHBOARD.md): the workspace's `agent.contactPlan` —
// when the first contact goes out, the calling window, how often a voice lead is called again,
// the WhatsApp follow-up templates and nudge. The server checks it with the config file's schema;
// a refused field is named in the page's error (contactPlan.voice.maxAttempts: …).

export type ContactPlan = AgentData['agent']['contactPlan'];
type Template = NonNullable<ContactPlan['whatsapp']['nudgeTemplate']>;

const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const DAY_NAMES: Record<(typeof DAYS)[number], string> = {
  mon: 'Mon',
  tue: 'Tue',
  wed: 'Wed',
  thu: 'Thu',
  fri: 'Fri',
  sat: 'Sat',
  sun: 'Sun',
};

/** A template as typed: "HX…" (Twilio's content SID) or "name/language" (Meta); empty: none. */
export function templateText(t: Template | undefined): string {
  if (!t) return '';
  return 'contentSid' in t ? t.contentSid : `${t.name}/${t.language}`;
}
export function parseTemplate(text: string): Template | undefined {
  const s = text.trim();
  if (s === '') return undefined;
  const slash = s.lastIndexOf('/');
  // Anything else goes to the server as a content SID, which names what is wrong with it.
  if (/^HX/i.test(s) || slash < 1) return { contentSid: s };
  return { name: s.slice(0, slash), language: s.slice(slash + 1) };
}

/** A number field's value as sent: what was typed, so the server's message names a bad one. */
const num = (v: string) => (v.trim() === '' ? Number.NaN : Number(v));
const words = (v: string) => v.split(/[\s,]+/).filter((x) => x !== '');
const minutesList = (v: string) => words(v).map(num);

/**
 * An input whose text is parsed into the setting on every keystroke but shown as typed, so "2, "
 * or "1." can be typed on the way to "2, 30" or "1.5" (the page remounts this after a save).
 */
function Parsed<T>({
  initial,
  parse,
  onChange,
}: {
  initial: string;
  parse: (text: string) => T;
  onChange: (v: T) => void;
}) {
  const [text, setText] = useState(initial);
  return (
    <input
      value={text}
      onChange={(e) => {
        setText(e.target.value);
        onChange(parse(e.target.value));
      }}
    />
  );
}

const shown = (n: number | null) => (n === null || Number.isNaN(n) ? '' : String(n));

function Row({ label, hint, children }: { label: string; hint?: string; children: React.ReactNode }) {
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is the label's child, passed in
    <label className="setting">
      {label}
      {children}
      {hint && <small>{hint}</small>}
    </label>
  );
}

export function FollowUpSettings({
  plan,
  channel,
  canEdit,
  onChange,
}: {
  plan: ContactPlan;
  channel: 'voice' | 'whatsapp';
  canEdit: boolean;
  onChange: (p: ContactPlan) => void;
}) {
  const w = plan.window;
  const v = plan.voice;
  const wa = plan.whatsapp;
  const setWindow = (patch: Partial<ContactPlan['window']>) => onChange({ ...plan, window: { ...w, ...patch } });
  const setVoice = (patch: Partial<ContactPlan['voice']>) => onChange({ ...plan, voice: { ...v, ...patch } });
  const setWa = (patch: Partial<ContactPlan['whatsapp']>) => onChange({ ...plan, whatsapp: { ...wa, ...patch } });
  const setFollowUp = (i: number, f: ContactPlan['whatsapp']['followUps'][number]) =>
    setWa({ followUps: wa.followUps.map((x, j) => (j === i ? f : x)) });
  if (!canEdit) return <FollowUpSummary plan={plan} channel={channel} />;
  const days = (d: (typeof DAYS)[number], on: boolean) =>
    setWindow({ days: on ? DAYS.filter((x) => x === d || w.days.includes(x)) : w.days.filter((x) => x !== d) });
  return (
    <fieldset className="follow-ups" disabled={!canEdit}>
      <legend>Follow-ups</legend>
      <p className="hint">
        When the agent tries again to reach a lead who has not answered. Attempts happen inside the calling window in
        the lead's local time; the plan stops as soon as the lead answers, books, opts out or goes to a person.
      </p>
      <Row label="First contact">
        <select
          value={plan.firstContact}
          onChange={(e) => onChange({ ...plan, firstContact: e.target.value as ContactPlan['firstContact'] })}
        >
          <option value="immediate">At once, whatever the time</option>
          <option value="in_window">Inside the calling window</option>
        </select>
      </Row>
      <fieldset className="days">
        <legend>Calling days</legend>
        {DAYS.map((d) => (
          <label key={d} className="day">
            <input type="checkbox" checked={w.days.includes(d)} onChange={(e) => days(d, e.target.checked)} />{' '}
            {DAY_NAMES[d]}
          </label>
        ))}
      </fieldset>
      <Row label="Calling window from" hint="The lead's local time, such as 09:00.">
        <input value={w.start} onChange={(e) => setWindow({ start: e.target.value })} />
      </Row>
      <Row label="Calling window until" hint="Such as 20:00 (24:00: midnight).">
        <input value={w.end} onChange={(e) => setWindow({ end: e.target.value })} />
      </Row>
      <Row label="Holidays" hint="Dates such as 2026-12-25, separated by spaces: nobody is contacted on them.">
        <Parsed initial={w.holidays.join(' ')} parse={words} onChange={(holidays) => setWindow({ holidays })} />
      </Row>
      {channel === 'voice' ? (
        <>
          <Row label="Calls at most" hint="Attempts in all, the first call included.">
            <Parsed initial={shown(v.maxAttempts)} parse={num} onChange={(maxAttempts) => setVoice({ maxAttempts })} />
          </Row>
          <Row label="Calls in 24 hours at most">
            <Parsed
              initial={shown(v.maxAttemptsPer24h)}
              parse={num}
              onChange={(maxAttemptsPer24h) => setVoice({ maxAttemptsPer24h })}
            />
          </Row>
          <Row
            label="Call again after (minutes)"
            hint={
              'After a ring-out, such as 2, 30: the 2nd call 2 minutes later, the 3rd 30 minutes later; ' +
              'later ones on the next calling day.'
            }
          >
            <Parsed
              initial={v.retryAfterMinutes.join(', ')}
              parse={minutesList}
              onChange={(retryAfterMinutes) => setVoice({ retryAfterMinutes })}
            />
          </Row>
          <Row label="After a busy line, call again after (minutes)">
            <Parsed
              initial={shown(v.busyRetryAfterMinutes)}
              parse={num}
              onChange={(busyRetryAfterMinutes) => setVoice({ busyRetryAfterMinutes })}
            />
          </Row>
          <Row label="Next calling day at" hint="Such as 10:00, in the lead's local time.">
            <input value={v.nextDayAt} onChange={(e) => setVoice({ nextDayAt: e.target.value })} />
          </Row>
          <Row
            label="Voicemail message"
            hint={
              'Left at most once a day; {{leadFirstName}}, {{agentName}} and {{businessName}} are filled in. ' +
              'Empty: hang up on a machine.'
            }
          >
            <textarea
              rows={3}
              value={v.voicemailMessage ?? ''}
              onChange={(e) => setVoice({ voicemailMessage: e.target.value.trim() === '' ? null : e.target.value })}
            />
          </Row>
        </>
      ) : (
        <>
          <fieldset className="follow-up-steps">
            <legend>Follow-up templates</legend>
            {wa.followUps.map((f, i) => (
              <div key={`${i}-${wa.followUps.length}`} className="follow-up-step">
                <Row label={`Follow-up ${i + 1} after (hours)`}>
                  <Parsed
                    initial={shown(f.afterHours)}
                    parse={num}
                    onChange={(afterHours) => setFollowUp(i, { ...f, afterHours })}
                  />
                </Row>
                <Row
                  label={`Follow-up ${i + 1} template`}
                  hint="HX… (Twilio) or name/language (Meta); empty: the first-contact template again."
                >
                  <Parsed
                    initial={templateText(f.template)}
                    parse={parseTemplate}
                    onChange={(template) =>
                      setFollowUp(i, { afterHours: f.afterHours, ...(template ? { template } : {}) })
                    }
                  />
                </Row>
                {canEdit && (
                  <button type="button" onClick={() => setWa({ followUps: wa.followUps.filter((_, j) => j !== i) })}>
                    Remove follow-up {i + 1}
                  </button>
                )}
              </div>
            ))}
            {canEdit && wa.followUps.length < 5 && (
              <button
                type="button"
                onClick={() =>
                  setWa({ followUps: [...wa.followUps, { afterHours: (wa.followUps.at(-1)?.afterHours ?? 0) + 24 }] })
                }
              >
                Add a follow-up
              </button>
            )}
          </fieldset>
          <Row label="Nudge after (minutes)" hint="One nudge when a lead who answered falls silent; empty: none.">
            <Parsed
              initial={shown(wa.nudgeAfterMinutes)}
              parse={(t) => (t.trim() === '' ? null : num(t))}
              onChange={(nudgeAfterMinutes) => setWa({ nudgeAfterMinutes })}
            />
          </Row>
          <Row label="Nudge template" hint="Sent outside the 24-hour window: HX… (Twilio) or name/language (Meta).">
            <Parsed
              initial={templateText(wa.nudgeTemplate)}
              parse={parseTemplate}
              onChange={(t) => {
                const { nudgeTemplate: _old, ...rest } = wa;
                onChange({ ...plan, whatsapp: { ...rest, ...(t ? { nudgeTemplate: t } : {}) } });
              }}
            />
          </Row>
          <Row
            label="Give up after (hours)"
            hint="How long the last follow-up waits for an answer before the lead goes to a person."
          >
            <Parsed
              initial={shown(wa.giveUpAfterHours)}
              parse={num}
              onChange={(giveUpAfterHours) => setWa({ giveUpAfterHours })}
            />
          </Row>
        </>
      )}
    </fieldset>
  );
}

/** What a reader sees (no controls): the settings in words. */
function FollowUpSummary({ plan, channel }: { plan: ContactPlan; channel: 'voice' | 'whatsapp' }) {
  const w = plan.window;
  const v = plan.voice;
  const wa = plan.whatsapp;
  const rows: [string, string][] = [
    ['First contact', plan.firstContact === 'immediate' ? 'At once' : 'Inside the calling window'],
    ['Calling window', `${w.days.map((d) => DAY_NAMES[d]).join(', ')}, ${w.start}–${w.end}`],
    ['Holidays', w.holidays.join(', ') || '—'],
    ...(channel === 'voice'
      ? ([
          ['Calls at most', `${v.maxAttempts} (${v.maxAttemptsPer24h} in 24 hours)`],
          ['Call again after', `${v.retryAfterMinutes.join(', ')} minutes; busy: ${v.busyRetryAfterMinutes} minutes`],
          ['Next calling day at', v.nextDayAt],
          ['Voicemail message', v.voicemailMessage ?? 'None: hang up on a machine'],
        ] as [string, string][])
      : ([
          [
            'Follow-ups',
            wa.followUps
              .map((f) => `after ${f.afterHours} h${f.template ? ` (${templateText(f.template)})` : ''}`)
              .join('; ') || 'None',
          ],
          ['Nudge', wa.nudgeAfterMinutes === null ? 'None' : `after ${wa.nudgeAfterMinutes} minutes`],
          ['Give up after', `${wa.giveUpAfterHours} hours`],
        ] as [string, string][])),
  ];
  return (
    <section aria-labelledby="follow-ups-settings-h" className="follow-ups">
      <h3 id="follow-ups-settings-h">Follow-ups</h3>
      <dl>
        {rows.map(([term, value]) => (
          <Fragment key={term}>
            <dt>{term}</dt>
            <dd>{value}</dd>
          </Fragment>
        ))}
      </dl>
    </section>
  );
}
