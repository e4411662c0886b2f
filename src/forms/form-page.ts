import type { QualificationQuestion } from '../workspaces/agent-config.ts';
import type { FormSettings } from '../workspaces/form-settings.ts';
import type { ConsentText } from './consent-texts.ts';
import { HONEYPOT_FIELD } from './form-abuse.ts';
import { escapeHtml, renderShell, type RenderedPage } from './form-html.ts';
import type { FormStrings } from './form-strings.ts';

// The hosted form itself: server-rendered, complete without JavaScript. Each field has its label,
// its hint and its error tied to it (aria-describedby, aria-invalid); the errors of a rejected POST
// are rendered next to their fields with what the lead typed kept, and a summary at the top.

export interface FormPageInput {
  workspaceName: string;
  slug: string;
  settings: FormSettings;
  strings: FormStrings;
  questions: QualificationQuestion[];
  consent: ConsentText;
  logoUrl: string | null;
  embed: boolean;
  fillToken: string;
  /** The page the form was on (the embedding site), carried to the POST. */
  page: string | null;
  livemode: boolean;
  values?: Record<string, string>;
  errors?: Record<string, string>;
  /** A problem of the whole submission (too fast, Turnstile). */
  formError?: string;
}

interface FieldSpec {
  name: string;
  label: string;
  required: boolean;
  control: (attrs: string, value: string) => string;
  hint?: string;
}

export function renderFormPage(p: FormPageInput): RenderedPage {
  const s = p.strings;
  const values = p.values ?? {};
  const errors = p.errors ?? {};
  const fields: FieldSpec[] = [
    { name: 'name', label: s.name, required: true, control: (a, v) => input('text', a, v, 'name', 120) },
    {
      name: 'phone',
      label: s.phone,
      required: true,
      hint: s.phoneHint,
      control: (a, v) => input('tel', a, v, 'tel', 40),
    },
  ];
  if (p.settings.email !== 'hidden')
    fields.push({
      name: 'email',
      label: s.email,
      required: p.settings.email === 'required',
      control: (a, v) => input('email', a, v, 'email', 254),
    });
  if (p.settings.showGoal)
    fields.push({
      name: 'goal',
      label: s.goal,
      required: false,
      control: (a, v) => `<textarea ${a} rows="3" maxlength="2000">${escapeHtml(v)}</textarea>`,
    });
  for (const q of p.questions) fields.push(questionField(q, s));
  const rendered = fields.map((f) => renderField(f, values[f.name] ?? '', errors[f.name], s)).join('\n');
  const consentError = errors.consent;
  const action = `/forms/${encodeURIComponent(p.slug)}${p.embed ? '?embed=1' : ''}`;
  const anyError = Object.keys(errors).length > 0 || p.formError;
  const summary = anyError
    ? `<div class="summary" role="alert" id="form-problems"><p>${escapeHtml(p.formError ?? s.errorSummary)}</p></div>`
    : '';
  const honeypot =
    `<div class="hp" aria-hidden="true"><label for="f-${HONEYPOT_FIELD}">${escapeHtml(s.honeypotLabel)}</label>` +
    `<input type="text" id="f-${HONEYPOT_FIELD}" name="${HONEYPOT_FIELD}" tabindex="-1" autocomplete="off"></div>`;
  const turnstile = p.settings.turnstile
    ? `<div class="cf-turnstile" data-sitekey="${escapeHtml(p.settings.turnstile.siteKey)}" ` +
      `data-language="${p.settings.language}"></div>`
    : '';
  const consentAttrs =
    `data-required-msg="${escapeHtml(s.consentRequired)}"` +
    (values.consent === 'yes' ? ' checked' : '') +
    (consentError ? ' aria-invalid="true" aria-describedby="f-consent-error"' : '');
  const body = `<h1>${escapeHtml(p.workspaceName)}</h1>
${p.livemode ? '' : `<p class="note">${escapeHtml(s.sandboxNote)}</p>`}
${summary}
<form class="li-form" method="post" action="${escapeHtml(action)}" accept-charset="utf-8">
<input type="hidden" name="_t" value="${escapeHtml(p.fillToken)}">
<input type="hidden" name="_c" value="${p.consent.id}">
${p.page ? `<input type="hidden" name="_page" value="${escapeHtml(p.page)}">` : ''}
${honeypot}
${rendered}
<div class="field consent${consentError ? ' invalid' : ''}">
<input type="checkbox" id="f-consent" name="consent" value="yes" required ${consentAttrs}>
<label for="f-consent">${escapeHtml(p.consent.text)}</label>
<p class="error" id="f-consent-error">${consentError ? escapeHtml(consentError) : ''}</p>
</div>
${turnstile}
<button type="submit">${escapeHtml(s.submit)}</button>
</form>`;
  return renderShell({
    lang: p.settings.language,
    title: p.workspaceName,
    accentColor: p.settings.accentColor,
    embed: p.embed,
    workspaceName: p.workspaceName,
    logoUrl: p.logoUrl,
    body,
    turnstile: Boolean(p.settings.turnstile),
  });
}

function input(type: string, attrs: string, value: string, autocomplete: string, max: number): string {
  return (
    `<input type="${type}" ${attrs} value="${escapeHtml(value)}" ` +
    `autocomplete="${autocomplete}" maxlength="${max}">`
  );
}

function questionField(q: QualificationQuestion, s: FormStrings): FieldSpec {
  if (q.type === 'choice')
    return {
      name: q.id,
      label: q.label,
      required: q.required,
      control: (a, v) =>
        `<select ${a}><option value="">${escapeHtml(s.choose)}</option>${(q.options ?? [])
          .map((o) => `<option${o === v ? ' selected' : ''}>${escapeHtml(o)}</option>`)
          .join('')}</select>`,
    };
  if (q.type === 'number')
    return {
      name: q.id,
      label: q.label,
      required: q.required,
      control: (a, v) => `<input type="text" inputmode="decimal" ${a} value="${escapeHtml(v)}" maxlength="40">`,
    };
  return {
    name: q.id,
    label: q.label,
    required: q.required,
    control: (a, v) => `<input type="text" ${a} value="${escapeHtml(v)}" maxlength="500">`,
  };
}

function renderField(f: FieldSpec, value: string, error: string | undefined, s: FormStrings): string {
  const id = `f-${f.name}`;
  const described = [f.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const attrs = [
    `id="${id}"`,
    `name="${escapeHtml(f.name)}"`,
    f.required ? `required data-required-msg="${escapeHtml(s.required)}"` : '',
    described ? `aria-describedby="${described}"` : '',
    error ? 'aria-invalid="true"' : '',
  ]
    .filter(Boolean)
    .join(' ');
  const optional = f.required ? '' : ` <span class="opt">${escapeHtml(s.optional)}</span>`;
  return `<div class="field${error ? ' invalid' : ''}">
<label for="${id}">${escapeHtml(f.label)}${optional}</label>
${f.hint ? `<p class="hint" id="${id}-hint">${escapeHtml(f.hint)}</p>` : ''}
${f.control(attrs, value)}
<p class="error" id="${id}-error">${error ? escapeHtml(error) : ''}</p>
</div>`;
}
