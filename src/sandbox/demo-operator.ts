import type { OperatorService } from '../operators/operator-service.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import { DEMO_SLUGS } from './demo-workspaces.ts';

// The demo's operator (docs/DASHBOARD.md): owner of both demo workspaces, so the dashboard can be
// tried at once. Its password is generated and printed once, when it is created (the first start
// writes it to demo-keys.txt); a later `npm start` or `npm run demo` keeps it, so the saved
// password and open sessions stay valid. `leadintake user reset-password` sets a new one.

export const DEMO_OPERATOR_EMAIL = 'demo@leadintake.local';

export interface DemoOperator {
  email: string;
  /** Only when this call created the operator: passwords are stored hashed and cannot be shown again. */
  password: string | null;
}

export async function ensureDemoOperator(
  operators: OperatorService,
  workspaces: WorkspaceService,
): Promise<DemoOperator> {
  const created = await operators.create(DEMO_OPERATOR_EMAIL, 'Demo Operator');
  for (const slug of Object.values(DEMO_SLUGS)) {
    const workspace = await workspaces.findBySlug(slug);
    if (workspace) await operators.addMembership(DEMO_OPERATOR_EMAIL, workspace.id, 'owner');
  }
  return { email: DEMO_OPERATOR_EMAIL, password: created?.password ?? null };
}

/** How to sign in: the new password, or where the existing one was saved (`keysFile`, when there is one). */
export function demoOperatorLines(baseUrl: string, op: DemoOperator, keysFile: string | null = null): string[] {
  // The demo workspaces' hosted forms (sandbox mode: docs/INTAKE.md): a lead without curl.
  const forms = `Hosted forms: ${baseUrl}/forms/demo-whatsapp and ${baseUrl}/forms/demo-voice`;
  if (op.password)
    return [`Dashboard: ${baseUrl}/admin — sign in as ${op.email} with the password ${op.password}`, forms, ''];
  const where = keysFile
    ? `with the password saved in ${keysFile} (unchanged)`
    : 'with the password printed when it was created (unchanged; ' +
      `"leadintake user reset-password ${op.email}" sets a new one)`;
  return [`Dashboard: ${baseUrl}/admin — sign in as ${op.email} ${where}`, forms, ''];
}
