import type { Core } from '../runtime.ts';
import { listApiKeys, revokeApiKey } from '../workspaces/api-key-queries.ts';
import { AppError } from '../shared/errors.ts';
import { CliError, parseCommandArgs, positiveInt, required } from './args.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// What each subcommand takes (an unknown subcommand is refused by the switch below).
const KEY_OPTIONS: Record<string, Array<'name' | 'hourly-limit' | 'json' | 'sandbox'>> = {
  create: ['name', 'hourly-limit', 'json', 'sandbox'],
  revoke: [],
  list: ['json'],
};

/** A cap's refusal as the CLI says it, with the setting that moves the cap (the operator runs the CLI). */
function capRefused(err: unknown): never {
  if (!(err instanceof AppError)) throw err;
  const setting = err.code === 'limit_reached' ? 'MAX_API_KEYS_PER_WORKSPACE' : 'MAX_KEY_HOURLY_LIMIT';
  const text = err.code === 'limit_reached' ? err.message : (err.details.issues?.[0]?.message ?? err.message);
  throw new CliError(`${text} (${setting} sets this limit.)`);
}

export async function keyCommand(args: string[], core: Core): Promise<number> {
  const { config, pool } = core;
  const [sub, ...rest] = args;
  const { values, positionals } = parseCommandArgs(
    rest,
    { name: 'string', 'hourly-limit': 'string', json: 'boolean', sandbox: 'boolean' },
    `key ${sub}`,
    KEY_OPTIONS[sub ?? ''],
  );
  const service = core.workspaces;
  switch (sub) {
    case 'create': {
      const slug = required(positionals[0], 'workspace slug');
      const hourlyLimit = positiveInt(values['hourly-limit'], '--hourly-limit');
      const sandbox = values.sandbox === true;
      const caps = { maxHourlyLimit: config.MAX_KEY_HOURLY_LIMIT, maxKeys: config.MAX_API_KEYS_PER_WORKSPACE };
      const opts = { ...(values.name ? { name: values.name } : {}), ...(hourlyLimit ? { hourlyLimit } : {}), sandbox };
      const key = await service.createKey(slug, opts, caps).catch(capRefused);
      if (!key) throw new CliError(`No workspace "${slug}".`);
      if (values.json) console.log(JSON.stringify(key));
      else console.log(`${sandbox ? 'Sandbox key' : 'API key'} ${key.id} (shown once, store it now): ${key.key}`);
      return 0;
    }
    case 'revoke': {
      const id = required(positionals[0], 'key id');
      if (!UUID.test(id) || !(await revokeApiKey(pool, id))) throw new CliError(`No API key "${id}".`);
      console.log(`Revoked API key ${id}.`);
      return 0;
    }
    case 'list': {
      const slug = required(positionals[0], 'workspace slug');
      const workspace = await service.findBySlug(slug);
      if (!workspace) throw new CliError(`No workspace "${slug}".`);
      const keys = await listApiKeys(pool, workspace.id);
      if (values.json) console.log(JSON.stringify(keys));
      else
        for (const k of keys)
          console.log(
            `${k.id}\t${k.prefix}…\t${k.name}\t${k.livemode ? 'live' : 'sandbox'}\tlimit ${k.hourlyLimit}/h\t${k.revokedAt ? 'revoked' : 'active'}`,
          );
      return 0;
    }
    default:
      throw new CliError('Usage: leadintake key create|revoke|list ...');
  }
}
