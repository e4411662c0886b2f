import type { Channel } from '../workspaces/workspace-queries.ts';
import type { FormSettings } from '../workspaces/form-settings.ts';
import { escapeHtml, renderShell, type RenderedPage } from './form-html.ts';
import type { FormStrings } from './form-strings.ts';

// The pages a POST answers with besides the form: thank you (what happens next), "we already have
// your details" (the API's 409), too many requests (429), and a failure; and the unknown form.

export interface ResultPageContext {
  workspaceName: string;
  settings: FormSettings;
  strings: FormStrings;
  logoUrl: string | null;
  embed: boolean;
}

function messagePage(c: ResultPageContext, title: string, paragraphs: string[]): RenderedPage {
  return renderShell({
    lang: c.settings.language,
    title,
    accentColor: c.settings.accentColor,
    embed: c.embed,
    workspaceName: c.workspaceName,
    logoUrl: c.logoUrl,
    turnstile: false,
    body: `<h1>${escapeHtml(title)}</h1>\n<div role="status">${paragraphs.join('\n')}</div>`,
  });
}

const para = (text: string) => `<p>${escapeHtml(text)}</p>`;

/** wa.me wants the number's digits only (https://faq.whatsapp.com/5913398998672934). */
export function waMeLink(number: string): string {
  return `https://wa.me/${number.replace(/\D/g, '')}`;
}

export interface ThankYouInput {
  channel: Channel;
  /** Voice: a call was placed (false: the number is on the do-not-contact list, no call). */
  calling: boolean;
  /** The workspace's WhatsApp number, when known. */
  whatsappNumber: string | null;
}

export function renderThankYou(c: ResultPageContext, t: ThankYouInput): RenderedPage {
  const s = c.strings;
  const parts = [para(c.settings.thankYou ?? s.thanksDefault)];
  if (t.channel === 'voice' && t.calling)
    parts.push(para(c.settings.callerNumber ? s.callingNowFrom(c.settings.callerNumber) : s.callingNow));
  if (t.channel === 'whatsapp') {
    parts.push(para(s.whatsappNext));
    if (t.whatsappNumber)
      parts.push(
        `<p><a class="button" href="${escapeHtml(waMeLink(t.whatsappNumber))}" target="_top" rel="noopener">` +
          `${escapeHtml(s.whatsappOpen)}</a></p>`,
      );
  }
  if (c.settings.selfBookingUrl)
    parts.push(
      `<p>${escapeHtml(s.selfBooking)} <a href="${escapeHtml(c.settings.selfBookingUrl)}" ` +
        `target="_top" rel="noopener">${escapeHtml(s.selfBookingLink)}</a></p>`,
    );
  return messagePage(c, s.thanksTitle, parts);
}

export const renderDuplicate = (c: ResultPageContext) =>
  messagePage(c, c.strings.duplicateTitle, [para(c.strings.duplicateBody)]);
export const renderLimited = (c: ResultPageContext) =>
  messagePage(c, c.strings.limitTitle, [para(c.strings.limitBody)]);
export const renderFailed = (c: ResultPageContext) =>
  messagePage(c, c.strings.failedTitle, [para(c.strings.failedBody)]);
export const renderNotFound = (c: ResultPageContext) =>
  messagePage(c, c.strings.notFoundTitle, [para(c.strings.notFoundBody)]);
