import { useCallback, useEffect, useState } from 'react';
import { api, type Schemas, type WorkspaceAccess } from './api.ts';
import { saveErrorText } from './save-error.ts';
import type { AgentData, Persona, TemplateFields } from './settings-types.ts';
import { InboxSettingsBlock } from './inbox-settings.tsx';
import { FollowUpSettings, type ContactPlan } from './follow-up-settings.tsx';

// The Agent page (docs/DASHBOARD.md, "Form builder and agent settings"): persona, criteria, time
// zone, phone country, the WhatsApp first-contact template, the kill switch, and the system prompt
// the agent would receive for a sample lead — rebuilt by the server from the unsaved edits.

type Draft = {
  persona: Persona;
  criteria: string;
  timeZone: string;
  defaultCountry: string;
  links: string;
  holding: string;
  template: TemplateFields | null;
  contactPlan: ContactPlan;
};

const toDraft = (a: AgentData): Draft => ({
  persona: a.agent.persona,
  criteria: a.agent.criteria,
  timeZone: a.agent.timeZone,
  defaultCountry: a.agent.defaultCountry ?? '',
  links: (a.agent.allowedLinkDomains ?? []).join(' '),
  holding: a.agent.holdingMessage ?? '',
  template: a.whatsappTemplate,
  contactPlan: a.agent.contactPlan,
});

const HOLDING_HINT =
  'What a lead hears on WhatsApp when the agent hands it to a person without an answer (its model failed, ' +
  'the kill switch, a limit). Empty: "Thanks — a colleague will reply shortly."';

const body = (d: Draft): Schemas['AdminAgentDraft'] => ({
  persona: d.persona,
  criteria: d.criteria,
  timeZone: d.timeZone,
  defaultCountry: d.defaultCountry || null,
  allowedLinkDomains: d.links.split(/[\s,]+/).filter((x) => x !== ''),
  holdingMessage: d.holding.trim() || null,
  contactPlan: d.contactPlan,
  ...(d.template
    ? {
        whatsappTemplate:
          d.template.provider === 'twilio'
            ? { templateContentSid: d.template.templateContentSid ?? '', templateBody: d.template.templateBody || null }
            : {
                templateName: d.template.templateName ?? '',
                templateLanguage: d.template.templateLanguage ?? '',
                templateBody: d.template.templateBody || null,
              },
      }
    : {}),
});

/** What the switch does, as the turn engine and voice dispatch actually behave. */
function KillSwitchText({ channel }: { channel: 'voice' | 'whatsapp' }) {
  if (channel === 'voice') {
    return (
      <p>
        On a voice workspace this switch changes nothing today: it is read only by the WhatsApp agent. Calls are placed
        when a lead is submitted, whether it is on or off.
      </p>
    );
  }
  return (
    <ul>
      <li>
        <strong>Off</strong>: the agent writes nothing. New leads get no first-contact message (their turn ends without
        sending, and is not sent later); a lead who writes is handed to a person (needs human) and gets the holding
        message while the 24-hour window is open. Operators can still take a lead over and reply.
      </li>
      <li>
        <strong>On</strong>: the agent answers again; leads handed over while it was off stay with a person until
        "Resume AI". Leads submitted while it was off are not contacted automatically.
      </li>
    </ul>
  );
}

function Field({
  label,
  value,
  onChange,
  canEdit,
  multiline,
  hint,
}: {
  label: string;
  value: string;
  onChange: (v: string) => void;
  canEdit: boolean;
  multiline?: boolean;
  hint?: string;
}) {
  if (!canEdit)
    return (
      <>
        <dt>{label}</dt>
        <dd>{value || '—'}</dd>
      </>
    );
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is the label's child, chosen by `multiline`
    <label className="setting">
      {label}
      {multiline ? (
        <textarea rows={4} value={value} onChange={(e) => onChange(e.target.value)} />
      ) : (
        <input value={value} onChange={(e) => onChange(e.target.value)} />
      )}
      {hint && <small>{hint}</small>}
    </label>
  );
}

export function AgentPage({ workspace }: { workspace: WorkspaceAccess }) {
  const base = `/api/admin/workspaces/${encodeURIComponent(workspace.slug)}/agent`;
  const canEdit = workspace.permissions.includes('settings.manage');
  const [saved, setSaved] = useState<AgentData | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [prompt, setPrompt] = useState('');
  const [previewError, setPreviewError] = useState('');
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const show = useCallback((a: AgentData) => {
    setSaved(a);
    setDraft(toDraft(a));
  }, []);
  useEffect(() => {
    api<AgentData>('GET', base).then(show, (e: Error) => setError(e.message));
  }, [base, show]);
  // The preview follows the edits, a moment after typing stops.
  useEffect(() => {
    if (!draft) return;
    const timer = setTimeout(() => {
      api<Schemas['AdminAgentPreview']>('POST', `${base}/preview`, body(draft)).then(
        (r) => {
          setPrompt(r.prompt);
          setPreviewError('');
        },
        (e: unknown) => setPreviewError(`No preview: ${saveErrorText(e).replace(/^Not saved\. /, '')}`),
      );
    }, 300);
    return () => clearTimeout(timer);
  }, [base, draft]);

  if (!saved || !draft)
    return (
      <main className="agent-settings">
        <h1>Agent</h1>
        {error ? (
          <p role="alert" className="error">
            {error}
          </p>
        ) : (
          <p className="loading">Loading…</p>
        )}
      </main>
    );
  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch });
  const setPersona = (k: keyof Persona) => (v: string) => set({ persona: { ...draft.persona, [k]: v } });
  const setTemplate = (k: keyof TemplateFields) => (v: string) => set({ template: { ...draft.template!, [k]: v } });
  const save = async (e: React.FormEvent) => {
    e.preventDefault();
    setError('');
    try {
      show(await api<AgentData>('PUT', base, { version: saved.version, ...body(draft) }));
      setNotice('Agent settings saved.');
    } catch (err) {
      setError(saveErrorText(err));
    }
  };
  const toggle = async () => {
    const off = saved.enabled;
    if (off && !confirm('Switch the agent off? It stops sending messages to every lead of this workspace.')) return;
    setError('');
    try {
      const r = await api<Schemas['AdminAgentSwitched']>('POST', `${base}/${off ? 'switch-off' : 'switch-on'}`);
      setSaved({ ...saved, enabled: r.enabled });
      setNotice(r.enabled ? 'The agent is on.' : 'The agent is off.');
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const t = draft.template;
  const fields = (
    <>
      <Field label="Agent name" value={draft.persona.agentName} onChange={setPersona('agentName')} canEdit={canEdit} />
      <Field label="Company" value={draft.persona.company} onChange={setPersona('company')} canEdit={canEdit} />
      <Field label="Offer" value={draft.persona.offer} onChange={setPersona('offer')} canEdit={canEdit} multiline />
      <Field label="Tone" value={draft.persona.tone} onChange={setPersona('tone')} canEdit={canEdit} />
      <Field
        label="Qualification criteria"
        value={draft.criteria}
        onChange={(v) => set({ criteria: v })}
        canEdit={canEdit}
        multiline
        hint="Empty: every lead who wants a consultation qualifies."
      />
      <Field
        label="Time zone"
        value={draft.timeZone}
        onChange={(v) => set({ timeZone: v })}
        canEdit={canEdit}
        hint="An IANA name such as Europe/Berlin: times offered and booked are in it."
      />
      <Field
        label="Default country for phone numbers"
        value={draft.defaultCountry}
        onChange={(v) => set({ defaultCountry: v })}
        canEdit={canEdit}
        hint="Two letters such as DE: completes numbers a form sends without +country code."
      />
      <Field
        label="Allowed link domains"
        value={draft.links}
        onChange={(v) => set({ links: v })}
        canEdit={canEdit}
        hint={
          'Such as sunnyroofs.example, separated by spaces: the only sites (and their subdomains) ' +
          "the agent's WhatsApp messages may link to; other links are removed before sending. Empty: no links."
        }
      />
      {saved.channel === 'whatsapp' && (
        <Field
          label="Holding message"
          value={draft.holding}
          onChange={(v) => set({ holding: v })}
          canEdit={canEdit}
          multiline
          hint={HOLDING_HINT}
        />
      )}
      {t && t.provider === 'twilio' && (
        <Field
          label="Template Content SID (Twilio)"
          value={t.templateContentSid ?? ''}
          onChange={setTemplate('templateContentSid')}
          canEdit={canEdit}
          hint="The approved first-contact template, HX + 32 hex characters; {{1}} is the lead's first name."
        />
      )}
      {t && t.provider === 'meta' && (
        <Field
          label="Template name (Meta)"
          value={t.templateName ?? ''}
          onChange={setTemplate('templateName')}
          canEdit={canEdit}
        />
      )}
      {t && t.provider === 'meta' && (
        <Field
          label="Template language (Meta)"
          value={t.templateLanguage ?? ''}
          onChange={setTemplate('templateLanguage')}
          canEdit={canEdit}
          hint="Such as en_US."
        />
      )}
      {t && (
        <Field
          label="Template text"
          value={t.templateBody ?? ''}
          onChange={setTemplate('templateBody')}
          canEdit={canEdit}
          multiline
          hint="Optional: the template's text with {{1}}, shown to the model as the first message."
        />
      )}
    </>
  );
  // Remounted after a save or a reload, so its fields show what the server kept.
  const followUps = (
    <FollowUpSettings
      key={saved.version}
      plan={draft.contactPlan}
      channel={saved.channel}
      canEdit={canEdit}
      onChange={(contactPlan) => set({ contactPlan })}
    />
  );
  return (
    <main className="agent-settings">
      <h1>Agent</h1>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <p role="status" className="notice">
        {notice}
      </p>
      <section aria-labelledby="switch-h" className="kill-switch">
        <h2 id="switch-h">The agent is {saved.enabled ? 'on' : 'off'}</h2>
        <KillSwitchText channel={saved.channel} />
        {canEdit && (
          <button type="button" className={saved.enabled ? 'danger' : ''} onClick={() => void toggle()}>
            {saved.enabled ? 'Switch the agent off' : 'Switch the agent on'}
          </button>
        )}
      </section>
      <div className="form-columns">
        <section aria-labelledby="settings-h">
          <h2 id="settings-h">Settings</h2>
          {saved.channel === 'whatsapp' && !t && (
            <p className="hint">
              The first-contact template is edited here once the workspace's WhatsApp provider is set.
            </p>
          )}
          {canEdit ? (
            <form className="agent-form" onSubmit={(e) => void save(e)}>
              {fields}
              {followUps}
              <button type="submit">Save agent settings</button>
            </form>
          ) : (
            <>
              <p>Your role can read these settings; owners and admins edit them.</p>
              <dl>{fields}</dl>
              {followUps}
            </>
          )}
        </section>
        {saved.channel === 'voice' ? (
          <section aria-labelledby="call-h">
            <h2 id="call-h">What a call gets</h2>
            <p>
              Calls do not use a prompt from here: Vapi runs your assistant's own prompt, with the lead filled in
              through the call's variables: <code>{'{{leadName}}'}</code>, <code>{'{{leadFirstName}}'}</code>,{' '}
              <code>{'{{leadEmail}}'}</code>, <code>{'{{leadGoal}}'}</code>, <code>{'{{leadMetadata}}'}</code> and{' '}
              <code>{'{{formResponses}}'}</code> (docs/VOICE.md). Put them under a heading that says they are data about
              the lead. These settings reach a call through the agent's tools (the questions, booking, callbacks) and
              the voicemail message.
            </p>
          </section>
        ) : (
          <section aria-labelledby="preview-h">
            <h2 id="preview-h">System prompt preview</h2>
            <p>
              What the agent receives for a sample lead (Sam Sample, no answers yet)
              {canEdit ? ', with your unsaved edits' : ''}, from the agent's own prompt builder.
            </p>
            {previewError && (
              <p role="alert" className="error">
                {previewError}
              </p>
            )}
            <pre className="prompt" role="region" aria-label="System prompt" tabIndex={0}>
              {prompt}
            </pre>
          </section>
        )}
      </div>
      <InboxSettingsBlock workspace={workspace} />
    </main>
  );
}
