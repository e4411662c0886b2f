import { Fragment, useCallback, useEffect, useState } from 'react';
import { api, type Schemas } from './api.ts';
import { saveErrorText } from './save-error.ts';

// The Form page's "Form settings" section (docs/INTAKE.md, "The Form page"): the hosted form's
// language, colour, e-mail field, consent text (a changed text is saved as a new version; leads
// keep the one they agreed to), thank-you text, numbers, self-booking link, mode, Turnstile and
// logo. Owners and admins edit; the other roles see the same fields disabled.

type Answer = Schemas['AdminFormSettings'];
type Settings = Answer['settings'];

const LOGO_TYPES = 'image/png,image/jpeg,image/webp,image/svg+xml';
const MAX_LOGO = 256 * 1024;

/** A text field's value as the API takes it: empty means "not set". */
const opt = (v: string) => (v.trim() === '' ? undefined : v.trim());

function toBase64(file: File): Promise<string> {
  return file.arrayBuffer().then((buf) => {
    let bin = '';
    const bytes = new Uint8Array(buf);
    for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(bin);
  });
}

const EMAIL = { optional: 'Optional', required: 'Required', hidden: 'Hidden' } as const;

/** What a reader sees: the settings as text (no disabled fields to tab through). */
function ReadOnlySettings({ answer }: { answer: Answer }) {
  const s = answer.settings;
  const rows: Array<[string, string]> = [
    ['Language', s.language === 'de' ? 'German' : 'English'],
    ['Accent colour', s.accentColor],
    ['E-mail field', EMAIL[s.email]],
    ["Lead's goal", s.showGoal ? 'Asked' : 'Not asked'],
    [`Consent text (version ${answer.consent.version})`, answer.consent.text],
    ['Thank-you text', s.thankYou ?? 'The default'],
    ['Caller number', s.callerNumber ?? '—'],
    ['WhatsApp number', s.whatsappNumber ?? '—'],
    ['Self-booking link', s.selfBookingUrl ?? '—'],
    ['Mode', s.mode === 'sandbox' ? 'Sandbox: test leads' : 'Live'],
    ['Turnstile', s.turnstile ? `Site key ${s.turnstile.siteKey}` : 'Off'],
  ];
  return (
    <>
      <p>Owners and admins change these settings.</p>
      <dl>
        {rows.map(([k, v]) => (
          <Fragment key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </Fragment>
        ))}
      </dl>
    </>
  );
}

export function FormSettingsSection({ base, canEdit }: { base: string; canEdit: boolean }) {
  const [saved, setSaved] = useState<Answer | null>(null);
  const [draft, setDraft] = useState<Settings | null>(null);
  const [turnstileSecret, setTurnstileSecret] = useState('');
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const show = useCallback((a: Answer) => {
    setSaved(a);
    setDraft(a.settings);
    setTurnstileSecret('');
  }, []);
  useEffect(() => {
    api<Answer>('GET', `${base}/settings`).then(show, (e: Error) => setError(e.message));
  }, [base, show]);
  if (!saved || !draft)
    return (
      <section aria-labelledby="form-settings-h" className="intake-section">
        <h2 id="form-settings-h">Form settings</h2>
        {error ? (
          <p role="alert" className="error">
            {error}
          </p>
        ) : (
          <p className="loading">Loading…</p>
        )}
      </section>
    );
  const set = (patch: Partial<Settings>) => setDraft({ ...draft, ...patch });
  const consentChanged = (draft.consentText ?? '') !== (saved.settings.consentText ?? '');
  const save = async (e: React.FormEvent) => {
    e.preventDefault();
    setError('');
    setNotice('');
    try {
      const siteKey = opt(draft.turnstile?.siteKey ?? '');
      const body: Schemas['AdminFormSettingsSave'] = {
        language: draft.language,
        accentColor: draft.accentColor,
        email: draft.email,
        showGoal: draft.showGoal,
        mode: draft.mode,
        hourlyLimit: draft.hourlyLimit,
        consentText: opt(draft.consentText ?? ''),
        thankYou: opt(draft.thankYou ?? ''),
        callerNumber: opt(draft.callerNumber ?? ''),
        whatsappNumber: opt(draft.whatsappNumber ?? ''),
        selfBookingUrl: opt(draft.selfBookingUrl ?? ''),
        turnstile: siteKey ? { siteKey, ...(opt(turnstileSecret) ? { secret: turnstileSecret.trim() } : {}) } : null,
      };
      const before = saved.consent.version;
      const next = await api<Answer>('PUT', `${base}/settings`, body);
      show(next);
      setNotice(
        next.consent.version !== before
          ? `Form settings saved. The consent text is now version ${next.consent.version}.`
          : 'Form settings saved.',
      );
    } catch (err) {
      setError(saveErrorText(err));
    }
  };
  const uploadLogo = async (file: File | undefined) => {
    if (!file) return;
    setError('');
    if (file.size > MAX_LOGO) {
      setError('Not saved. The logo must be at most 256 KiB.');
      return;
    }
    try {
      const next = await api<Answer>('PUT', `${base}/logo`, { contentType: file.type, data: await toBase64(file) });
      setSaved(next);
      setNotice('Logo saved.');
    } catch (err) {
      setError(saveErrorText(err));
    }
  };
  const removeLogo = async () => {
    try {
      setSaved(await api<Answer>('DELETE', `${base}/logo`));
      setNotice('Logo removed.');
    } catch (err) {
      setError(saveErrorText(err));
    }
  };
  return (
    <section aria-labelledby="form-settings-h" className="intake-section">
      <h2 id="form-settings-h">Form settings</h2>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <p role="status" className="notice">
        {notice}
      </p>
      {!canEdit && <ReadOnlySettings answer={saved} />}
      {canEdit && (
        <form className="agent-form" onSubmit={save}>
          <fieldset className="plain">
            <legend className="visually-hidden">The hosted form's settings</legend>
            <label className="setting">
              Language
              <select
                value={draft.language}
                onChange={(e) => set({ language: e.target.value as Settings['language'] })}
              >
                <option value="en">English</option>
                <option value="de">German</option>
              </select>
            </label>
            <label className="setting">
              Accent colour
              <input type="color" value={draft.accentColor} onChange={(e) => set({ accentColor: e.target.value })} />
            </label>
            <label className="setting">
              E-mail field
              <select value={draft.email} onChange={(e) => set({ email: e.target.value as Settings['email'] })}>
                <option value="optional">Optional</option>
                <option value="required">Required</option>
                <option value="hidden">Hidden</option>
              </select>
            </label>
            <label>
              <input type="checkbox" checked={draft.showGoal} onChange={(e) => set({ showGoal: e.target.checked })} />
              {" Ask for the lead's goal"}
            </label>
            <label className="setting">
              Consent text
              <textarea
                rows={3}
                value={draft.consentText ?? ''}
                placeholder={saved.consent.text}
                aria-describedby="consent-help"
                onChange={(e) => set({ consentText: e.target.value })}
              />
              <small id="consent-help">
                Shown now: version {saved.consent.version}. Empty: the default wording of the form's language.
                {consentChanged && ' Saving makes a new version; leads keep the version they agreed to.'}
              </small>
            </label>
            <label className="setting">
              Thank-you text
              <textarea rows={2} value={draft.thankYou ?? ''} onChange={(e) => set({ thankYou: e.target.value })} />
            </label>
            <label className="setting">
              Caller number shown after sending (voice)
              <input
                type="tel"
                value={draft.callerNumber ?? ''}
                onChange={(e) => set({ callerNumber: e.target.value })}
              />
            </label>
            <label className="setting">
              WhatsApp number for the wa.me link
              <input
                type="tel"
                value={draft.whatsappNumber ?? ''}
                onChange={(e) => set({ whatsappNumber: e.target.value })}
              />
            </label>
            <label className="setting">
              Self-booking link (https)
              <input
                type="url"
                value={draft.selfBookingUrl ?? ''}
                onChange={(e) => set({ selfBookingUrl: e.target.value })}
              />
            </label>
            <label className="setting">
              Mode
              <select value={draft.mode} onChange={(e) => set({ mode: e.target.value as Settings['mode'] })}>
                <option value="live">Live: leads are real</option>
                <option value="sandbox">Sandbox: leads are test leads, providers simulated</option>
              </select>
            </label>
            <label className="setting">
              Cloudflare Turnstile site key
              <input
                value={draft.turnstile?.siteKey ?? ''}
                onChange={(e) =>
                  set({ turnstile: { siteKey: e.target.value, secretSet: draft.turnstile?.secretSet ?? false } })
                }
              />
            </label>
            <label className="setting">
              Turnstile secret key
              <input
                type="password"
                autoComplete="off"
                value={turnstileSecret}
                placeholder={saved.settings.turnstile?.secretSet ? 'Set (type to replace)' : ''}
                onChange={(e) => setTurnstileSecret(e.target.value)}
              />
            </label>
            <button type="submit">Save settings</button>
          </fieldset>
        </form>
      )}
      <h3>Logo</h3>
      <p>
        {saved.logo
          ? `A ${saved.logo.contentType.replace('image/', '').toUpperCase()} ` +
            `of ${Math.ceil(saved.logo.bytes / 1024)} KiB.`
          : 'No logo: the form shows the workspace name.'}
      </p>
      {canEdit && (
        <div className="toolbar">
          <label>
            Upload a logo (PNG, JPEG, WebP or SVG, at most 256 KiB){' '}
            <input type="file" accept={LOGO_TYPES} onChange={(e) => void uploadLogo(e.target.files?.[0])} />
          </label>
          {saved.logo && (
            <button type="button" onClick={() => void removeLogo()}>
              Remove logo
            </button>
          )}
        </div>
      )}
    </section>
  );
}
