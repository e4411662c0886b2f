import { z } from 'zod';
import {
  defineRoute,
  named,
  type ContractResponse,
  type NamedSchema,
  type RouteContract,
} from '../http/route-contract.ts';

// What the admin routes' contracts share (docs/DASHBOARD.md): the error body, the workspace and
// lead in the path, the CSRF header, and adminRoute, which makes a contract a dashboard route
// (tag, session cookie, the session's rate limit).

type Json = Record<string, unknown>;

/** Every error string the admin routes send (src/http/error-handler.ts). */
export const ADMIN_ERROR_STRINGS = [
  'Request body must be valid JSON.',
  'Validation failed.',
  'Bad request.',
  'Request body is too large.',
  'Unsupported media type.',
  'Sign in required.',
  'Email or password is incorrect.',
  'Too many sign-in attempts; retry later.',
  'Missing or invalid CSRF token.',
  'Too many live-update streams for this session: close other dashboard tabs.',
  'Your role in this workspace does not allow this.',
  'Workspace not found.',
  'Lead not found.',
  "The lead's status does not allow this.",
  'Someone else has taken this lead over.',
  'The follow-ups do not allow this now.',
  'Webhook endpoint not found in this workspace.',
  'API key not found in this workspace.',
  'Lead source not found in this workspace.',
  'Member not found in this workspace.',
  'A workspace keeps at least one owner: make another member owner first.',
  'That e-mail address is already a member of this workspace.',
  'Invitation not found, already used or expired: ask an owner for a new link.',
  'An account with this e-mail address exists: sign in to accept the invitation.',
  'This invitation is for another e-mail address: sign in with that address.',
  'No such dead-lettered turn in this workspace (it may have been retried already).',
  'Note not found.',
  'These settings were changed meanwhile.',
  'Workspace limit reached.',
  'Rate limit exceeded.',
  'Service is busy; retry shortly.',
  'Internal server error.',
] as const;

const adminErrorSchema = z.object({
  ok: z.literal(false),
  error: z.enum(ADMIN_ERROR_STRINGS),
  issues: z
    .array(z.object({ path: z.array(z.string()), message: z.string() }))
    .optional()
    .meta({
      description:
        'With `Validation failed.`: each bad field; ' +
        'with `Workspace limit reached.`: which limit, and how many it allows.',
    }),
  message: z.string().optional(),
  status: z.string().optional().meta({ description: "With a 409: the lead's current status." }),
});

export const adminError = named('AdminError', adminErrorSchema);
export const adminOk = named('AdminOk', z.object({ ok: z.literal(true) }));
/** The body of an action that takes none: `{}`. */
export const adminEmptyBody = named('AdminEmptyBody', z.object({}));

// Path parameters are documented, not checked here: an id that is no UUID is answered 404 by the
// route, like an unknown one.
export const slugParam = z.string().meta({ description: 'The workspace.' });
export const uuidParam = (description: string) => z.string().meta({ description, format: 'uuid' });
export const slugParams = z.object({ slug: slugParam });
export const leadParams = z.object({ slug: slugParam, id: uuidParam('The lead.') });

/** The CSRF token every state-changing request of a signed-in operator sends (admin-auth.ts checks it). */
export const csrfHeaders = z.object({
  'X-CSRF-Token': z.string().meta({ description: 'The `csrfToken` of the session.' }),
});

export const answer = (description: string, body: NamedSchema): ContractResponse => ({ description, body });

/** The error responses of a page's routes: `errors('401', '404')` with the page's texts. */
export const errorResponses =
  (text: Record<string, string>) =>
  (...codes: string[]): Record<string, ContractResponse> =>
    Object.fromEntries(codes.map((c) => [c, answer(text[c]!, adminError)]));

// Every call that carries a session cookie counts against the session's rate limit (admin-rate-limit.ts).
const LIMITED =
  'More than ADMIN_RATE_LIMIT_PER_MINUTE requests of this session in the current minute; ' +
  'retry after `Retry-After` seconds.';

/**
 * An admin route: tagged Dashboard, signed in with the session cookie unless `security` says otherwise, and its 429.
 */
export function adminRoute<
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(contract: Omit<RouteContract<P, Q, B>, 'tags' | 'security'> & { security?: Json[] }): RouteContract<P, Q, B> {
  const before = contract.responses['429'];
  return defineRoute<P, Q, B>({
    ...contract,
    tags: ['Dashboard'],
    security: contract.security ?? [{ sessionCookie: [] }],
    responses: {
      ...contract.responses,
      '429': before ? { ...before, description: `${before.description} Or: ${LIMITED}` } : answer(LIMITED, adminError),
    },
  });
}
