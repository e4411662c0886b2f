import type { OperatorService } from '../operators/operator-service.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import { DEMO_SLUGS } from './demo-workspaces.ts';

// The demo's operator (docs/DASHBOARD.md): owner of both demo workspaces, so the dashboard can be
// tried at once. Its password is printed with the demo's keys; a later demo run sets a new one
// (passwords are stored hashed and cannot be shown again).

export const DEMO_OPERATOR_EMAIL = 'demo@leadintake.local';

export async function ensureDemoOperator(operators: OperatorService, workspaces: WorkspaceService): Promise<{ email: string; password: string }> {
  const created = await operators.create(DEMO_OPERATOR_EMAIL, 'Demo Operator');
  const password = created?.password ?? (await operators.resetPassword(DEMO_OPERATOR_EMAIL));
  if (!password) throw new Error('cannot create the demo operator');
  for (const slug of Object.values(DEMO_SLUGS)) {
    const workspace = await workspaces.findBySlug(slug);
    if (workspace) await operators.addMembership(DEMO_OPERATOR_EMAIL, workspace.id, 'owner');
  }
  return { email: DEMO_OPERATOR_EMAIL, password };
}

export function demoOperatorLines(baseUrl: string, op: { email: string; password: string }): string[] {
  return [`Dashboard: ${baseUrl}/admin — sign in as ${op.email} with the password ${op.password}`, ''];
}
