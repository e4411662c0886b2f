import crypto from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { META_SIGNATURE_HEADER, signMetaBody } from '../../whatsapp/meta/meta-signature.ts';
import { startLocalHttpServer, postToWebhook } from '../local-http-server.ts';
import {
  graphErrorBody,
  invalidToken,
  unknownObject,
  unknownPath,
  type GraphErrorSpec,
} from '../meta/meta-sim-graph.ts';

// Local stand-in for Meta Lead Ads (Meta's Lead Ads "Retrieving Leads" and "Webhooks for Lead Ads"
// docs) so tests reach it through the real MetaLeadClient:
//   GET /{version}/{leadgen-id}?fields=…          one lead (Page token, appsecret_proof checked)
//   GET /{version}/{form-id}/leads?fields=…       newest first, `limit`, `after` cursor, the
//                                                 `time_created` GREATER_THAN filter
// and a sender of the Page's `leadgen` webhook, serialised and signed as Meta does
// (X-Hub-Signature-256 with the app secret). The cursor format is ours (Graph's is opaque).

export const META_LEADS_SIM = {
  version: 'v23.0',
  pageId: '104857600000001',
  formId: '730000000000001',
  pageAccessToken: 'EAAsimulatedPageToken',
  appSecret: 'simulated-app-secret',
  verifyToken: 'simulated-verify-token',
} as const;

export interface SimLead {
  id: string;
  formId: string;
  createdTime: Date;
  fieldData: Array<{ name: string; values: string[] }>;
  adId?: string;
  adsetId?: string;
  campaignId?: string;
  isOrganic: boolean;
  platform: 'fb' | 'ig';
}

export interface MetaLeadsSimulator {
  url: string;
  /** The Graph base URL with its version: WHATSAPP_GRAPH_BASE_URL. */
  graphBaseUrl: string;
  /** Every request received: method, path, query and the Authorization header's presence. */
  requests: Array<{ method: string; path: string; query: Record<string, string>; authorized: boolean }>;
  /** Stores a lead as a form submission would (an ad's lead unless `isOrganic`). */
  addLead(lead: Partial<Omit<SimLead, 'id'>> & Pick<SimLead, 'fieldData'>): SimLead;
  /** The next `count` Graph reads answer this error (default: Graph's 500 "unknown error"). */
  failNext(count: number, error?: GraphErrorSpec): void;
  /** Posts the `leadgen` webhook of `lead` to `url`, signed with `appSecret` (default the simulator's). */
  sendLeadgen(
    url: string,
    lead: SimLead,
    opts?: { appSecret?: string; pageId?: string },
  ): Promise<{ status: number; text: string }>;
  close(): Promise<void>;
}

const unknownError = (): GraphErrorSpec => ({
  status: 500,
  code: 1,
  message: 'An unknown error occurred',
  isTransient: true,
});

export async function startMetaLeadsSimulator(
  opts: { pageAccessToken?: string; appSecret?: string; now?: () => Date } = {},
): Promise<MetaLeadsSimulator> {
  const token = opts.pageAccessToken ?? META_LEADS_SIM.pageAccessToken;
  const appSecret = opts.appSecret ?? META_LEADS_SIM.appSecret;
  const now = opts.now ?? (() => new Date());
  const proof = crypto.createHmac('sha256', appSecret).update(token).digest('hex');
  const leads = new Map<string, SimLead>();
  const injected: GraphErrorSpec[] = [];
  const requests: MetaLeadsSimulator['requests'] = [];
  let seq = 0;

  function answer(req: IncomingMessage): [number, unknown] {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const query = Object.fromEntries(url.searchParams);
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    requests.push({ method: req.method ?? 'GET', path: url.pathname, query, authorized: bearer !== undefined });
    const failure = injected.shift();
    if (failure) return [failure.status, graphErrorBody(failure)];
    if ((bearer ?? query.access_token) !== token) return error(invalidToken());
    if (query.appsecret_proof !== undefined && query.appsecret_proof !== proof)
      return error({ status: 400, code: 100, message: 'Invalid appsecret_proof provided in the API argument' });
    const fields = (query.fields ?? 'id,created_time,field_data').split(',');
    const one = /^\/v\d+\.\d+\/(\d+)\/?$/.exec(url.pathname);
    if (one && req.method === 'GET') {
      const lead = leads.get(one[1]!);
      return lead ? [200, view(lead, fields)] : error(unknownObject(one[1]!, 'get'));
    }
    const list = /^\/v\d+\.\d+\/(\d+)\/leads\/?$/.exec(url.pathname);
    if (list && req.method === 'GET') return formLeads(list[1]!, query, fields);
    return error(unknownPath(url.pathname.split('/').slice(2).join('/')));
  }

  function formLeads(formId: string, query: Record<string, string>, fields: string[]): [number, unknown] {
    let since = -Infinity;
    if (query.filtering) {
      const filters = JSON.parse(query.filtering) as Array<{ field: string; operator: string; value: number }>;
      for (const f of filters) if (f.field === 'time_created' && f.operator === 'GREATER_THAN') since = f.value * 1000;
    }
    const all = [...leads.values()]
      .filter((l) => l.formId === formId && l.createdTime.getTime() > since)
      .sort((a, b) => b.createdTime.getTime() - a.createdTime.getTime() || b.id.localeCompare(a.id));
    const limit = Math.min(Number(query.limit ?? 25) || 25, 500);
    const start = query.after ? Number(Buffer.from(query.after, 'base64url').toString()) : 0;
    const page = all.slice(start, start + limit);
    const cursor = (i: number) => Buffer.from(String(i)).toString('base64url');
    const paging: Record<string, unknown> = { cursors: { before: cursor(start), after: cursor(start + page.length) } };
    if (start + page.length < all.length)
      paging.next = `${META_LEADS_SIM.version}/${formId}/leads?after=${cursor(start + page.length)}`;
    return [200, { data: page.map((l) => view(l, fields)), paging }];
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    for await (const _ of req) {
      /* Graph reads have no body */
    }
    const [status, body] = answer(req);
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json; charset=UTF-8',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  }

  const http = await startLocalHttpServer(handle, { onFailure: (res) => void res.writeHead(500).end() });
  return {
    url: http.url,
    graphBaseUrl: `${http.url}/${META_LEADS_SIM.version}`,
    requests,
    addLead(input) {
      seq += 1;
      const lead: SimLead = {
        id: `${9_100_000_000_000_00 + seq * 7919}`,
        formId: input.formId ?? META_LEADS_SIM.formId,
        createdTime: input.createdTime ?? now(),
        fieldData: input.fieldData,
        isOrganic: input.isOrganic ?? false,
        platform: input.platform ?? 'fb',
        ...(input.isOrganic
          ? {}
          : {
              adId: input.adId ?? '120200000000001',
              adsetId: input.adsetId ?? '120200000000002',
              campaignId: input.campaignId ?? '120200000000003',
            }),
      };
      leads.set(lead.id, lead);
      return lead;
    },
    failNext(count, error = unknownError()) {
      for (let i = 0; i < count; i += 1) injected.push(error);
    },
    async sendLeadgen(url, lead, sendOpts = {}) {
      const body = JSON.stringify(leadgenWebhook(lead, sendOpts.pageId));
      return postToWebhook(
        url,
        {
          'content-type': 'application/json',
          [META_SIGNATURE_HEADER]: signMetaBody(sendOpts.appSecret ?? appSecret, body),
        },
        body,
        { timeoutMs: 15_000 },
      );
    },
    close: () => http.close(),
  };
}

/** The Page webhook Meta posts for a new lead (Webhooks for Lead Ads, `leadgen` field). */
export function leadgenWebhook(lead: SimLead, pageId: string = META_LEADS_SIM.pageId): Record<string, unknown> {
  const created = Math.floor(lead.createdTime.getTime() / 1000);
  return {
    object: 'page',
    entry: [
      {
        id: pageId,
        time: created,
        changes: [
          {
            field: 'leadgen',
            value: {
              ...(lead.adId ? { ad_id: lead.adId, adgroup_id: lead.adId } : {}),
              form_id: lead.formId,
              leadgen_id: lead.id,
              created_time: created,
              page_id: pageId,
            },
          },
        ],
      },
    ],
  };
}

/** A lead as Graph renders the requested fields; `created_time` in Graph's `+0000` form. */
function view(lead: SimLead, fields: string[]): Record<string, unknown> {
  const all: Record<string, unknown> = {
    id: lead.id,
    created_time: lead.createdTime.toISOString().replace(/\.\d{3}Z$/, '+0000'),
    field_data: lead.fieldData,
    ad_id: lead.adId,
    adset_id: lead.adsetId,
    campaign_id: lead.campaignId,
    form_id: lead.formId,
    is_organic: lead.isOrganic,
    platform: lead.platform,
  };
  return Object.fromEntries(fields.filter((f) => all[f] !== undefined).map((f) => [f, all[f]]));
}

function error(spec: GraphErrorSpec): [number, unknown] {
  return [spec.status, graphErrorBody(spec)];
}
