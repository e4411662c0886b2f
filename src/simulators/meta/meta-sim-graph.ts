import { randomBytes } from 'node:crypto';

// Graph's side of the Meta simulator: error envelopes and validation of a `/messages` body,
// answering with the codes and wording Meta uses (Meta's WhatsApp Cloud API docs). Wording confirmed from
// real responses: "(#100) Invalid parameter" with details "Parameter 'text' is mandatory for
// component parameter type 'text'", "(#132001) Template name does not exist in the translation"
// with "template name (x) does not exist in en_US", "(#131047) Re-engagement message", the 100/33
// "Unsupported post request" text. The "(#100) The parameter … is required." / "Param … must be
// one of …" family follows Graph's general style and is UNCONFIRMED for these exact fields.

/** An approved template: `body` uses {{1}}, {{2}}, … like WhatsApp Manager. */
export interface MetaSimTemplate {
  name: string;
  language: string;
  body: string;
}

export interface GraphErrorSpec {
  status: number;
  message: string;
  type?: string;
  code: number;
  subcode?: number;
  details?: string;
  isTransient?: boolean;
}

/** Graph's envelope, fields in the order Meta writes them. */
export function graphErrorBody(spec: GraphErrorSpec): { error: Record<string, unknown> } {
  const error: Record<string, unknown> = {
    message: spec.message,
    type: spec.type ?? 'OAuthException',
    code: spec.code,
  };
  if (spec.details !== undefined) error.error_data = { messaging_product: 'whatsapp', details: spec.details };
  if (spec.subcode !== undefined) error.error_subcode = spec.subcode;
  if (spec.isTransient !== undefined) error.is_transient = spec.isTransient;
  error.fbtrace_id = `A${randomBytes(16).toString('base64url').slice(0, 22)}`;
  return { error };
}

export const invalidToken = (): GraphErrorSpec => ({
  status: 401,
  code: 190,
  message: 'Invalid OAuth access token - Cannot parse access token',
});

export const unknownObject = (id: string, method: 'get' | 'post' = 'post'): GraphErrorSpec => ({
  status: 400,
  code: 100,
  subcode: 33,
  type: 'GraphMethodException',
  message:
    `Unsupported ${method} request. Object with ID '${id}' does not exist, ` +
    'cannot be loaded due to missing permissions, or does not support this operation. ' +
    'Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api',
});

export const unknownPath = (path: string): GraphErrorSpec => ({
  status: 400,
  code: 2500,
  message: `Unknown path components: ${path}`,
});

export const reEngagement = (): GraphErrorSpec => ({
  status: 400,
  code: 131047,
  message: '(#131047) Re-engagement message',
  details:
    'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
});

const required = (param: string): GraphErrorSpec => ({
  status: 400,
  code: 100,
  message: `(#100) The parameter ${param} is required.`,
});
const oneOf = (param: string, allowed: string[], got: unknown): GraphErrorSpec => ({
  status: 400,
  code: 100,
  message: `(#100) Param ${param} must be one of {${allowed.join(', ')}} - got ${JSON.stringify(got)}.`,
});
const invalidParameter = (details: string): GraphErrorSpec => ({
  status: 400,
  code: 100,
  message: '(#100) Invalid parameter',
  details,
});

export type ParsedSend =
  | { kind: 'text'; input: string; waId: string; text: string }
  | {
      kind: 'template';
      input: string;
      waId: string;
      template: MetaSimTemplate;
      parameters: string[];
      rendered: string;
    };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Message types Graph knows; the simulator models text and template only. */
const KNOWN_TYPES = [
  'audio',
  'contacts',
  'document',
  'image',
  'interactive',
  'location',
  'reaction',
  'sticker',
  'template',
  'text',
  'video',
];

/** Checks a send body like Graph, in Graph's order; `templates` are those approved for the number. */
export function validateSend(
  body: unknown,
  templates: MetaSimTemplate[],
): { ok: true; send: ParsedSend } | { ok: false; error: GraphErrorSpec } {
  const fail = (error: GraphErrorSpec) => ({ ok: false as const, error });
  if (!isObject(body) || body.messaging_product === undefined) return fail(required('messaging_product'));
  if (body.messaging_product !== 'whatsapp')
    return fail(oneOf('messaging_product', ['WHATSAPP'], body.messaging_product));
  if (body.recipient_type !== undefined && body.recipient_type !== 'individual' && body.recipient_type !== 'group') {
    return fail(oneOf('recipient_type', ['INDIVIDUAL', 'GROUP'], body.recipient_type));
  }
  if (body.to === undefined || body.to === '') return fail(required('to'));
  // Graph tolerates `+`, spaces, dashes and parentheses around the digits (UNCONFIRMED: the
  // exact error for letters; 131009 is Meta's "Parameter value is not valid").
  const waId = typeof body.to === 'string' ? body.to.replace(/[\s+\-()]/g, '') : '';
  if (!/^\d{5,15}$/.test(waId)) {
    return fail({
      status: 400,
      code: 131009,
      message: '(#131009) Parameter value is not valid',
      details: 'Recipient phone number is not a valid phone number.',
    });
  }
  const input = body.to as string;
  const type = body.type ?? 'text'; // Meta's own "with Preview URL" example omits `type`.
  if (typeof type !== 'string' || !KNOWN_TYPES.includes(type))
    return fail(
      oneOf(
        'type',
        KNOWN_TYPES.map((t) => t.toUpperCase()),
        type,
      ),
    );
  if (type === 'text') return validateText(body, input, waId);
  if (type === 'template') return validateTemplate(body, input, waId, templates);
  return fail({
    status: 400,
    code: 131051,
    message: '(#131051) Unsupported message type',
    details: `The simulator models text and template messages only, not ${type}.`,
  });
}

function validateText(
  body: Json,
  input: string,
  waId: string,
): { ok: true; send: ParsedSend } | { ok: false; error: GraphErrorSpec } {
  if (!isObject(body.text)) return { ok: false, error: required('text') };
  const text = body.text.body;
  if (typeof text !== 'string' || text.trim() === '') return { ok: false, error: required("text['body']") };
  if ([...text].length > 4096)
    return { ok: false, error: invalidParameter("Param text['body'] must be at most 4096 characters long.") };
  if (body.text.preview_url !== undefined && typeof body.text.preview_url !== 'boolean') {
    return { ok: false, error: invalidParameter("Param text['preview_url'] must be a boolean.") };
  }
  return { ok: true, send: { kind: 'text', input, waId, text } };
}

function validateTemplate(
  body: Json,
  input: string,
  waId: string,
  templates: MetaSimTemplate[],
): { ok: true; send: ParsedSend } | { ok: false; error: GraphErrorSpec } {
  const fail = (error: GraphErrorSpec) => ({ ok: false as const, error });
  const t = body.template;
  if (!isObject(t)) return fail(required('template'));
  if (typeof t.name !== 'string' || t.name === '') return fail(required("template['name']"));
  if (!isObject(t.language)) return fail(required("template['language']"));
  const language = t.language.code;
  if (typeof language !== 'string' || language === '') return fail(required("template['language']['code']"));
  const template = templates.find((x) => x.name === t.name && x.language === language);
  if (!template) {
    // Meta's error-code table gives 404 for 132001 (one fixture shows 400); clients go by `code`.
    return fail({
      status: 404,
      code: 132001,
      message: '(#132001) Template name does not exist in the translation',
      details: `template name (${t.name}) does not exist in ${language}`,
    });
  }
  const components = t.components ?? [];
  if (!Array.isArray(components)) return fail(invalidParameter("Param template['components'] must be an array."));
  const given: Record<string, string[]> = { header: [], body: [], button: [] };
  for (const component of components) {
    if (!isObject(component) || typeof component.type !== 'string')
      return fail(required("template['components'][0]['type']"));
    const kind = component.type.toLowerCase();
    if (!(kind in given)) return fail(oneOf('type', ['HEADER', 'BODY', 'BUTTON'], component.type));
    for (const p of Array.isArray(component.parameters) ? component.parameters : []) {
      if (!isObject(p) || p.type !== 'text')
        return fail(invalidParameter('The simulator models text parameters only.'));
      if (typeof p.text !== 'string' || p.text === '')
        return fail(invalidParameter("Parameter 'text' is mandatory for component parameter type 'text'"));
      if (/[\n\t]| {5,}/.test(p.text))
        return fail(
          invalidParameter('Param text cannot have new-line/tab characters or more than 4 consecutive spaces'),
        );
      given[kind]!.push(p.text);
    }
  }
  const expected = placeholderCount(template.body);
  // Simulated templates have a body only; header/button parameters cannot match anything.
  for (const [kind, values] of Object.entries(given)) {
    const want = kind === 'body' ? expected : 0;
    if (values.length !== want) {
      return fail({
        status: 400,
        code: 132000,
        message: '(#132000) Number of parameters does not match the expected number of params',
        details:
          `${kind}: number of localizable_params (${values.length}) ` +
          `does not match the expected number of params (${want})`,
      });
    }
  }
  const rendered = template.body.replace(/\{\{(\d+)\}\}/g, (_, n: string) => given.body![Number(n) - 1] ?? '');
  return { ok: true, send: { kind: 'template', input, waId, template, parameters: given.body!, rendered } };
}

function placeholderCount(body: string): number {
  let max = 0;
  for (const m of body.matchAll(/\{\{(\d+)\}\}/g)) max = Math.max(max, Number(m[1]));
  return max;
}
