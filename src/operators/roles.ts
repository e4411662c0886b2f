// Roles of a workspace membership and what each may do (docs/DASHBOARD.md). The API checks these
// on every request (403); the page only hides what the API would refuse.

export const ROLES = ['owner', 'admin', 'agent', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/** What the dashboard's API lets someone do in a workspace. */
export const PERMISSIONS = [
  'leads.read',
  'leads.act',
  'leads.delete',
  'webhooks.manage',
  // The workspace's pages: the form, agent and provider settings; keys; team; logs; analytics.
  'settings.read',
  'settings.manage',
  'keys.manage',
  'team.manage',
  'logs.read',
  'jobs.retry',
  'audit.read',
  'analytics.read',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const EVERYONE: readonly Permission[] = ['leads.read', 'settings.read', 'analytics.read'];
const ADMIN: readonly Permission[] = [
  ...EVERYONE,
  'leads.act',
  'leads.delete',
  'webhooks.manage',
  'settings.manage',
  'keys.manage',
  'logs.read',
  'jobs.retry',
  'audit.read',
];

const GRANTS: Record<Role, readonly Permission[]> = {
  // Only owners manage the team (and so who else is an owner).
  owner: [...ADMIN, 'team.manage'],
  admin: ADMIN,
  agent: [...EVERYONE, 'leads.act', 'logs.read'],
  viewer: EVERYONE,
};

export function can(role: Role, permission: Permission): boolean {
  return GRANTS[role].includes(permission);
}

export function permissionsOf(role: Role): Permission[] {
  return PERMISSIONS.filter((p) => GRANTS[role].includes(p));
}
