import type { Core } from '../runtime.ts';
import { listKeysOfKinds, revokeApiKey } from '../workspaces/api-key-queries.ts';
import { PublishableKeys } from '../workspaces/api-key-publishable.ts';
import { AppError } from '../shared/errors.ts';
import { CliError, parseCommandArgs, positiveInt, required } from './args.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// What each subcommand takes (an unknown subcommand is refused by the switch below).
type KeyOption = 'name' | 'hourly-limit' | 'json' | 'sandbox' | 'publishable' | 'origin';
const KEY_OPTIONS: Record<string, KeyOption[]> = {
  create: ['name', 'hourly-limit', 'json', 'sandbox', 'publishable', 'origin'],
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
    {
      name: 'string',
      'hourly-limit': 'string',
      json: 'boolean',
      sandbox: 'boolean',
      publishable: 'boolean',
      origin: 'string',
    },
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
      if (values.publishable || values.origin !== undefined) {
        return createPublishable(core, slug, { ...values, sandbox, ...(hourlyLimit ? { hourlyLimit } : {}) }, caps);
      }
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
      const keys = await listKeysOfKinds(pool, workspace.id, ['secret', 'publishable']);
      if (values.json) console.log(JSON.stringify(keys));
      else
        for (const k of keys)
          console.log(
            // A secret key's line is as it always was; a publishable key's adds its kind and origins.
            `${k.id}\t${k.prefix}…\t${k.name}\t${k.livemode ? 'live' : 'sandbox'}\tlimit ${k.hourlyLimit}/h\t` +
              `${k.revokedAt ? 'revoked' : 'active'}` +
              `${k.kind === 'publishable' ? `\tpublishable ${k.allowedOrigins.join(',')}` : ''}`,
          );
      return 0;
    }
    default:
      throw new CliError('Usage: leadintake key create|revoke|list ...');
  }
}

/** `key create <slug> --publishable --origin https://a.example[,https://b.example] [--sandbox]` (docs/INTAKE.md). */
async function createPublishable(
  core: Core,
  slug: string,
  o: { publishable?: boolean; origin?: string; name?: string; sandbox: boolean; json?: boolean; hourlyLimit?: number },
  caps: { maxHourlyLimit: number; maxKeys: number },
): Promise<number> {
  if (!o.publishable) throw new CliError('--origin is for publishable keys: add --publishable.');
  if (!o.origin)
    throw new CliError('A publishable key needs --origin https://your-site.example (several: comma-separated).');
  const workspace = await core.workspaces.findBySlug(slug);
  if (!workspace) throw new CliError(`No workspace "${slug}".`);
  const service = new PublishableKeys(core.pool, core.config.DEFAULT_HOURLY_LIMIT);
  const origins = o.origin.split(',').map((s) => s.trim());
  const key = await service
    .create(
      {
        workspaceId: workspace.id,
        allowedOrigins: origins,
        sandbox: o.sandbox,
        ...(o.name ? { name: o.name } : {}),
        ...(o.hourlyLimit ? { hourlyLimit: o.hourlyLimit } : {}),
      },
      caps,
    )
    .catch((err: unknown) => {
      if (
        err instanceof AppError &&
        err.code === 'validation_failed' &&
        err.details.issues?.[0]?.path[0] === 'allowedOrigins'
      )
        throw new CliError(err.details.issues[0].message);
      return capRefused(err);
    });
  if (o.json) console.log(JSON.stringify(key));
  else
    console.log(
      `Publishable ${o.sandbox ? 'sandbox ' : ''}key ${key.id} for ${key.allowedOrigins.join(', ')} ` +
        `(safe in a browser): ${key.key}`,
    );
  return 0;
}
