import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../shared/errors.ts';

// The providers' webhook routes (`/api/…/:slug/…`) keep their bodies as raw bytes until the
// workspace's signature is checked, and those bodies may be large (a Vapi end-of-call report).
// Reading one costs memory for as long as it arrives, so the workspace is looked up first, in an
// onRequest hook, before a byte of the body is read: a post to a slug that does not exist is
// answered 404 at once, and Node discards the rest of its body unbuffered. The answer is the one
// the service gives for a missing workspace, so the two cannot be told apart. Each route's own
// body limit then bounds what a known slug can make us hold.

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** Whether a live workspace has this slug (WorkspaceService.findBySlug: batched, one statement per moment). */
export type WorkspaceExists = (slug: string) => Promise<boolean>;

/** An onRequest hook for routes with a `:slug` parameter. */
export function workspaceFirst(exists: WorkspaceExists) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const slug = (request.params as { slug?: unknown }).slug;
    const known = typeof slug === 'string' && SLUG.test(slug) && (await exists(slug));
    if (!known) throw new AppError('workspace_not_found');
  };
}

/** The lookup most callers pass: any object with WorkspaceService's findBySlug. */
export function workspaceExists(workspaces: { findBySlug(slug: string): Promise<unknown> }): WorkspaceExists {
  return async (slug) => (await workspaces.findBySlug(slug)) !== null;
}

/** The 413 of a webhook route, naming its own limit (`request.routeOptions.bodyLimit`). */
export function webhookBodyTooLarge(limitBytes: number): AppError {
  const MiB = 1024 * 1024;
  const size = limitBytes % MiB === 0 ? `${limitBytes / MiB} MiB` : `${Math.round(limitBytes / 1024)} KiB`;
  return new AppError('webhook_body_too_large', { message: `The request body must be at most ${size}.` });
}
