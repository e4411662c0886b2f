import type { Core } from '../runtime.ts';
import { endpointLimitText, isEndpointError, type EndpointError } from '../webhooks/webhook-endpoint-service.ts';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/webhook-payload.ts';
import { CliError, parseCommandArgs, positiveInt, required } from './args.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Option = 'url' | 'events' | 'json' | 'limit' | 'all' | 'delivery';
// What each subcommand takes (an unknown subcommand is refused by the switch below).
const OPTIONS: Record<string, Option[]> = {
  add: ['url', 'events', 'json'],
  list: ['json'],
  remove: [],
  'rotate-secret': ['json'],
  deliveries: ['limit', 'json'],
  replay: ['all', 'delivery'],
  enable: [],
};

export const WEBHOOK_USAGE = 'Usage: leadintake webhook add|list|remove|rotate-secret|deliveries|replay|enable ...';

/** `leadintake webhook …`: a workspace's outbound webhook endpoints (docs/OUTBOUND-WEBHOOKS.md). */
export async function webhookCommand(args: string[], core: Core): Promise<number> {
  const [sub, ...rest] = args;
  if (!sub || !(sub in OPTIONS)) throw new CliError(WEBHOOK_USAGE);
  const { values, positionals } = parseCommandArgs(
    rest,
    { url: 'string', events: 'string', json: 'boolean', limit: 'string', all: 'boolean', delivery: 'string' },
    `webhook ${sub}`,
    OPTIONS[sub],
  );
  const service = core.webhookEndpoints;
  const endpointId = () => {
    const id = required(positionals[0], 'endpoint id');
    if (!UUID.test(id)) throw new CliError(`No webhook endpoint "${id}".`);
    return id;
  };
  switch (sub) {
    case 'add': {
      const slug = required(positionals[0], 'workspace slug');
      const url = required(values.url, '--url');
      const events = values.events
        ? values.events
            .split(',')
            .map((e) => e.trim())
            .filter((e) => e !== '')
        : [];
      const added = check(await service.add(slug, url, events), slug);
      if (values.json) console.log(JSON.stringify(added));
      else
        console.log(
          `Webhook endpoint ${added.endpoint.id} (${added.endpoint.eventTypes.join(',')}). ` +
            `Signing secret (shown once, store it now): ${added.secret}`,
        );
      return 0;
    }
    case 'list': {
      const slug = required(positionals[0], 'workspace slug');
      const list = check(await service.list(slug), slug);
      if (values.json) console.log(JSON.stringify(list));
      else if (list.length === 0) console.log(`No webhook endpoints in "${slug}".`);
      else
        for (const e of list)
          console.log(
            `${e.id}\t${e.url}\t${e.eventTypes.join(',')}\t` +
              `${e.enabled ? 'enabled' : `DISABLED since ${e.disabledAt ?? '?'}: ${e.disabledReason ?? 'disabled'}`}` +
              `${e.enabled && e.failingSince ? `\tfailing since ${e.failingSince}` : ''}`,
          );
      return 0;
    }
    case 'remove': {
      const id = endpointId();
      if (!(await service.remove(id))) throw new CliError(`No webhook endpoint "${id}".`);
      console.log(`Removed webhook endpoint ${id} and its delivery log.`);
      return 0;
    }
    case 'rotate-secret': {
      const id = endpointId();
      const r = check(await service.rotateSecret(id), id);
      if (values.json) console.log(JSON.stringify(r));
      else
        console.log(
          `New signing secret (shown once, store it now): ${r.secret}\n` +
            `The previous secret also signs until ${r.previousValidUntil}.`,
        );
      return 0;
    }
    case 'deliveries': {
      const id = endpointId();
      const log = check(await service.deliveries(id, positiveInt(values.limit, '--limit') ?? 20), id);
      if (values.json) console.log(JSON.stringify(log));
      else if (log.length === 0) console.log('No deliveries yet.');
      else
        for (const d of log) {
          console.log(`delivery ${d.deliveryId}\t${d.eventType}\t${d.messageId}\tlead ${d.leadId}\t${d.status}`);
          for (const a of d.attempts)
            console.log(
              `  ${a.at}\t${a.outcome}\t${a.statusCode ?? '-'}\t${a.latencyMs} ms\t` +
                `${JSON.stringify(a.response.slice(0, 200))}`,
            );
        }
      return 0;
    }
    case 'replay': {
      const id = endpointId();
      if (!values.all && !values.delivery) throw new CliError('Missing --delivery DELIVERY_ID (or --all).');
      if (values.all && values.delivery) throw new CliError('Give --delivery or --all, not both.');
      if (values.delivery && !/^\d{1,18}$/.test(values.delivery))
        throw new CliError(`Not a delivery id: "${values.delivery}".`);
      const n = check(await service.replay(id, values.delivery), id);
      if (n === 0)
        throw new CliError(
          values.all ? 'No failed deliveries to replay.' : `No failed delivery "${values.delivery}" for this endpoint.`,
        );
      console.log(`Queued ${n} failed deliver${n === 1 ? 'y' : 'ies'} again (a running serve or worker sends them).`);
      return 0;
    }
    case 'enable': {
      const id = endpointId();
      if (!(await service.enable(id))) throw new CliError(`No webhook endpoint "${id}".`);
      console.log(`Enabled webhook endpoint ${id}; its pending deliveries are queued again.`);
      return 0;
    }
  }
  throw new CliError(WEBHOOK_USAGE);
}

function check<T>(v: T | EndpointError, name: string): T {
  if (!isEndpointError(v)) return v;
  switch (v.error) {
    case 'no_workspace':
      throw new CliError(`No workspace "${name}".`);
    case 'no_endpoint':
      throw new CliError(`No webhook endpoint "${name}".`);
    case 'bad_url':
      throw new CliError(`--url ${v.problem}.`);
    case 'bad_event_type':
      throw new CliError(`Unknown event type "${v.type}". Event types: ${WEBHOOK_EVENT_TYPES.join(', ')}.`);
    case 'too_many_endpoints':
      throw new CliError(`${endpointLimitText(v.max)} (MAX_WEBHOOK_ENDPOINTS_PER_WORKSPACE sets this limit.)`);
  }
}
