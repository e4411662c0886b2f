import fs from 'node:fs';
import type { Config } from '../config/config.ts';
import type { Core } from '../runtime.ts';
import { setAgentEnabled } from '../whatsapp/conversation-queries.ts';
import { llmSettingsProblem } from '../workspaces/model-endpoint.ts';
import { parseWorkspaceConfig, type WorkspaceConfig } from '../workspaces/workspace-config.ts';
import type { WorkspaceRow } from '../workspaces/workspace-queries.ts';
import { CliError, parseCommandArgs, required } from './args.ts';
import { verifyWorkspace } from './workspace-verify.ts';
import { verifyClients } from '../verify-clients.ts';

// What each subcommand takes (an unknown subcommand is refused by the switch below).
const WORKSPACE_OPTIONS: Record<string, Array<'slug' | 'name' | 'channel' | 'config' | 'json' | 'show-secret'>> = {
  create: ['slug', 'name', 'channel', 'config', 'json'],
  update: ['config'],
  delete: [],
  list: ['json'],
  agent: [],
  verify: ['json', 'show-secret'],
};

export async function workspaceCommand(args: string[], core: Core): Promise<number> {
  const { config, pool } = core;
  const [sub, ...rest] = args;
  const { values, positionals } = parseCommandArgs(
    rest,
    {
      slug: 'string',
      name: 'string',
      channel: 'string',
      config: 'string',
      json: 'boolean',
      'show-secret': 'boolean',
    },
    `workspace ${sub}`,
    WORKSPACE_OPTIONS[sub ?? ''],
  );
  const service = core.workspaces;
  switch (sub) {
    case 'create': {
      const slug = required(values.slug, '--slug');
      if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(slug)) {
        throw new CliError(
          '--slug must be lowercase letters, digits and dashes (at most 63), starting with a letter or digit.',
        );
      }
      const channel = required(values.channel, '--channel');
      if (channel !== 'voice' && channel !== 'whatsapp') throw new CliError('--channel must be voice or whatsapp.');
      const wsConfig = values.config ? readConfigFile(values.config, config) : undefined;
      const result = await service.create({
        slug,
        name: required(values.name, '--name'),
        channel,
        ...(wsConfig ? { config: wsConfig } : {}),
      });
      if (result.kind === 'slug_taken') throw new CliError(`A workspace with slug "${slug}" already exists.`);
      const { workspace: w, apiKey, sandboxKey } = result;
      if (values.json) {
        console.log(
          JSON.stringify({
            workspace: { id: w.id, slug: w.slug, name: w.name, channel: w.channel },
            apiKey,
            sandboxKey,
          }),
        );
      } else {
        console.log(`Created workspace ${w.slug} (${w.channel}), id ${w.id}.`);
        console.log(`API key (shown once, store it now): ${apiKey.key}`);
        console.log(`Sandbox key (shown once; every provider simulated, see docs/SANDBOX.md): ${sandboxKey.key}`);
        printQuestionIds(w);
      }
      warnMissingProvider(w.channel, wsConfig ?? {}, w.slug);
      return 0;
    }
    case 'update': {
      const slug = required(positionals[0], 'workspace slug');
      const wsUpdate = readConfigFile(required(values.config, '--config'), config);
      const updated = await service.update(slug, wsUpdate);
      if (!updated) throw new CliError(`No workspace "${slug}".`);
      console.log(`Updated workspace ${slug}.`);
      if (wsUpdate.agent) printQuestionIds(updated);
      return 0;
    }
    case 'delete': {
      const slug = required(positionals[0], 'workspace slug');
      if (!(await service.delete(slug))) throw new CliError(`No workspace "${slug}".`);
      console.log(`Deleted workspace ${slug}; its API keys now answer 404.`);
      return 0;
    }
    case 'agent': {
      const slug = required(positionals[0], 'workspace slug');
      const state = positionals[1];
      if (state !== 'on' && state !== 'off') throw new CliError('Usage: leadintake workspace agent SLUG on|off');
      const workspace = await service.findBySlug(slug);
      if (!workspace || !(await setAgentEnabled(pool, workspace.id, state === 'on')))
        throw new CliError(`No workspace "${slug}".`);
      console.log(
        state === 'on'
          ? `The agent of ${slug} is on.`
          : `The agent of ${slug} is off: queued turns end without sending.`,
      );
      return 0;
    }
    case 'verify':
      return verifyWorkspace(
        required(positionals[0], 'workspace slug'),
        { json: values.json === true, showSecret: values['show-secret'] === true },
        config,
        pool,
        service,
        verifyClients(config),
      );
    case 'list': {
      const list = await service.list();
      if (values.json) {
        console.log(
          JSON.stringify(
            list.map((w) => ({ id: w.id, slug: w.slug, name: w.name, channel: w.channel, createdAt: w.createdAt })),
          ),
        );
      } else {
        for (const w of list) console.log(`${w.slug}\t${w.channel}\t${w.name}\t${w.id}`);
      }
      return 0;
    }
    default:
      throw new CliError('Usage: leadintake workspace create|update|delete|list|agent|verify ...');
  }
}

/**
 * A live lead of a workspace without its channel's provider section cannot be contacted: say so
 * on stderr (the workspace is still created: sandbox keys work without any provider).
 */
function warnMissingProvider(channel: 'voice' | 'whatsapp', config: WorkspaceConfig, slug: string): void {
  const section = channel === 'voice' ? 'voice' : 'whatsapp';
  if (config[section]) return;
  const example =
    channel === 'voice'
      ? '{"voice":{"provider":"vapi","apiKey":"…","assistantId":"…","phoneNumberId":"…"}}'
      : '{"whatsapp":{"provider":"twilio","accountSid":"AC…","authToken":"…","from":"+1…","templateContentSid":"HX…"}}';
  console.error(
    `Warning: the workspace has no "${section}" section, so live leads cannot be contacted ` +
      `(${channel === 'voice' ? 'a live POST answers 502' : 'live leads go to needs_human'}) until it is added:\n` +
      `  echo '${example}' > ${slug}.json\n` +
      `  leadintake workspace update ${slug} --config ${slug}.json && leadintake workspace verify ${slug}\n` +
      `The sandbox key works now (docs/SANDBOX.md); docs/WORKSPACE-CONFIG.md lists every setting.`,
  );
}

// Forms send answers keyed by these ids (formResponses), so show the ones just generated.
function printQuestionIds(workspace: WorkspaceRow): void {
  const questions = workspace.agent?.questions ?? [];
  if (questions.length === 0) return;
  console.log('Qualification questions (formResponses keys):');
  for (const q of questions) console.log(`  ${q.id}\t${q.label}`);
}

function readConfigFile(file: string, installation: Config): WorkspaceConfig {
  let json: unknown;
  try {
    json = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new CliError(`Cannot read config file ${file}: ${(err as Error).message}`);
  }
  const parsed = parseWorkspaceConfig(json);
  if (!parsed.ok) throw new CliError(`Invalid config file ${file}: ${parsed.message}`);
  const llm = llmSettingsProblem(parsed.config.llm, installation);
  if (llm) throw new CliError(`Invalid config file ${file}: ${llm.message}`);
  return parsed.config;
}
