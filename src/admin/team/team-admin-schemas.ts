import { z } from 'zod';
import { ROLES } from '../../operators/roles.ts';

// Requests and responses of the Team page (docs/DASHBOARD.md, "Providers, API keys and team"):
// members, roles and invitations, and the invitee's side of an invitation link.

const timestamp = z.iso.datetime({ precision: 3 });

export const inviteBody = z.object({ email: z.email().max(320), role: z.enum(ROLES) });
export const roleBody = z.object({ role: z.enum(ROLES) });
export const memberSchema = z.object({
  id: z.uuid(),
  email: z.string(),
  name: z.string(),
  role: z.enum(ROLES),
  since: timestamp,
});
export const pendingInviteSchema = z.object({
  id: z.uuid(),
  email: z.string(),
  role: z.enum(ROLES),
  createdAt: timestamp,
  expiresAt: timestamp,
});
export const teamSchema = z.object({
  ok: z.literal(true),
  members: z.array(memberSchema),
  invites: z.array(pendingInviteSchema),
});
export const invitedSchema = z.object({
  ok: z.literal(true),
  invite: pendingInviteSchema,
  link: z
    .string()
    .meta({ description: 'The one-time link to give the invitee: shown this once (only its hash is stored).' }),
});
export const inviteLookupBody = z.object({ token: z.string().min(20).max(100) });
export const inviteInfoSchema = z
  .object({
    ok: z.literal(true),
    email: z.string(),
    role: z.enum(ROLES),
    workspace: z.object({ slug: z.string(), name: z.string() }),
    expiresAt: timestamp,
  })
  .meta({
    description:
      'Whether the address has an account is not said: the invitee signs in as it, or creates it (409 if it exists).',
  });
export const acceptBody = z.object({
  token: z.string().min(20).max(100),
  name: z.string().trim().min(1).max(200).optional(),
  password: z.string().min(12, 'The password must be at least 12 characters.').max(200).optional(),
});
export const acceptedSchema = z.object({
  ok: z.literal(true),
  slug: z.string().meta({ description: 'The workspace joined.' }),
});
