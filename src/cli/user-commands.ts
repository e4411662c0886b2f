import type { Config } from '../config/config.ts';
import type { Pool } from '../db/pool.ts';
import { operatorService } from '../runtime.ts';
import { ROLES, type Role } from '../operators/roles.ts';
import { systemClock } from '../shared/clock.ts';
import { findLiveWorkspaceBySlug } from '../workspaces/workspace-queries.ts';
import { CliError, parseCommandArgs, required } from './args.ts';

// `leadintake user …`: the dashboard's operators (docs/DASHBOARD.md). Passwords are generated and
// printed once; nobody types one into a shell history.

const USER_OPTIONS: Record<string, Array<'email' | 'name' | 'workspace' | 'role' | 'json'>> = {
  create: ['email', 'name'],
  add: ['workspace', 'role'],
  list: ['json'],
  remove: [],
  'reset-password': [],
};

export async function userCommand(args: string[], config: Config, pool: Pool): Promise<number> {
  const [sub, ...rest] = args;
  const spec = { email: 'string', name: 'string', workspace: 'string', role: 'string', json: 'boolean' } as const;
  const { values, positionals } = parseCommandArgs(rest, spec, `user ${sub}`, USER_OPTIONS[sub ?? '']);
  const operators = operatorService(config, pool, systemClock);
  const signIn = `${config.PUBLIC_BASE_URL}/admin`;
  switch (sub) {
    case 'create': {
      const email = required(values.email, '--email');
      if (!/^[^\s@]+@[^\s@]+$/.test(email.trim())) throw new CliError(`Not an e-mail address: "${email}".`);
      const created = await operators.create(email, values.name);
      if (!created) throw new CliError(`A user "${email.trim().toLowerCase()}" exists already.`);
      console.log(`Created user ${created.email}. Password (shown once, store it now): ${created.password}`);
      console.log(
        `Sign in at ${signIn}; give access with: leadintake user add ${created.email} ` +
          '--workspace SLUG --role owner|admin|agent|viewer',
      );
      return 0;
    }
    case 'add': {
      const email = required(positionals[0], 'e-mail');
      const slug = required(values.workspace, '--workspace');
      const role = required(values.role, '--role');
      if (!(ROLES as readonly string[]).includes(role))
        throw new CliError(`--role must be one of ${ROLES.join(', ')}.`);
      // A lookup only: no settings are decrypted, so no installation key is needed.
      const workspace = await findLiveWorkspaceBySlug(pool, slug);
      if (!workspace) throw new CliError(`No workspace "${slug}".`);
      if (!(await operators.addMembership(email, workspace.id, role as Role)))
        throw new CliError(`No user "${email}".`);
      console.log(`${email.trim().toLowerCase()} is ${role} of ${slug}.`);
      return 0;
    }
    case 'list': {
      const users = await operators.list();
      if (values.json) console.log(JSON.stringify(users));
      else for (const u of users) console.log(`${u.email}\t${u.name}\t${u.memberships.join(' ') || '(no workspace)'}`);
      return 0;
    }
    case 'remove': {
      const email = required(positionals[0], 'e-mail');
      if (!(await operators.remove(email))) throw new CliError(`No user "${email}".`);
      console.log(`Removed user ${email.trim().toLowerCase()}; their sessions ended.`);
      return 0;
    }
    case 'reset-password': {
      const email = required(positionals[0], 'e-mail');
      const password = await operators.resetPassword(email);
      if (!password) throw new CliError(`No user "${email}".`);
      console.log(
        `New password for ${email.trim().toLowerCase()} (shown once; every session of the user ended): ${password}`,
      );
      return 0;
    }
    default:
      throw new CliError(
        'Usage: leadintake user create --email E [--name N] | add E --workspace S --role R | list | remove E | ' +
          'reset-password E',
      );
  }
}
