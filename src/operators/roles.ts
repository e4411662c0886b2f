// Roles of a workspace membership and what each may do (docs/DASHBOARD.md). The API checks these
// on every request (403); the page only hides what the API would refuse.

export const ROLES = ['owner', 'admin', 'agent', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/** What the dashboard's API lets someone do in a workspace. */
export type Permission = 'leads.read' | 'leads.act' | 'leads.delete' | 'webhooks.manage';

const GRANTS: Record<Role, readonly Permission[]> = {
  owner: ['leads.read', 'leads.act', 'leads.delete', 'webhooks.manage'],
  admin: ['leads.read', 'leads.act', 'leads.delete', 'webhooks.manage'],
  agent: ['leads.read', 'leads.act'],
  viewer: ['leads.read'],
};

export function can(role: Role, permission: Permission): boolean {
  return GRANTS[role].includes(permission);
}

export function permissionsOf(role: Role): Permission[] {
  return [...GRANTS[role]];
}
