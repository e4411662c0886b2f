// What we write to a lead, besides the model's own words.

/** WhatsApp allows 4096 characters, Twilio's Body 1600: the smaller bound holds for both providers. */
export const MAX_MESSAGE_LENGTH = 1600;

/** The first word of the name the lead gave (the template greets them with it). */
export function firstName(name: string): string {
  return name.trim().split(/\s+/)[0] || name.trim();
}

/**
 * The first-contact template as the lead sees it, when the workspace gave its text; otherwise a
 * description, so the model still knows how the conversation began.
 */
export function templateText(template: { body?: string; id: string }, variables: string[]): string {
  if (template.body) return template.body.replace(/\{\{\s*(\d+)\s*\}\}/g, (whole, n: string) => variables[Number(n) - 1] ?? whole);
  return `(WhatsApp template "${template.id}" sent to open the conversation, greeting the lead as ${variables[0] ?? 'them'}.)`;
}

/** The model's text as we send it: trimmed, and cut at the providers' limit. */
export function clampMessage(text: string): string {
  const trimmed = text.trim();
  return trimmed.length <= MAX_MESSAGE_LENGTH ? trimmed : `${trimmed.slice(0, MAX_MESSAGE_LENGTH - 1).trimEnd()}…`;
}
