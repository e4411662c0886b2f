import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { onProviderRequest, type ProviderOutcome } from '../shared/provider-request.ts';

// The process's Prometheus metrics (docs/OPERATIONS.md). Labels take only values from small
// closed sets — routes are templates, statuses are HTTP codes, channels and providers are our own
// names — never lead, workspace or key ids, and nothing personal.

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

const httpRequests = new Counter({
  name: 'leadintake_http_requests_total',
  help: 'HTTP requests answered, by method, route template and status.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});

const httpDuration = new Histogram({
  name: 'leadintake_http_request_duration_seconds',
  help: 'Time to answer an HTTP request, by method, route template and status.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

const leadsCreated = new Counter({
  name: 'leadintake_leads_created_total',
  help: 'Leads accepted by POST /api/public/leads (201), by channel and mode (live or sandbox).',
  labelNames: ['channel', 'mode'] as const,
  registers: [registry],
});

const leadTransitions = new Counter({
  name: 'leadintake_lead_status_transitions_total',
  help: 'Lead status changes, by old and new status.',
  labelNames: ['from', 'to'] as const,
  registers: [registry],
});

const speedToLead = new Histogram({
  name: 'leadintake_speed_to_lead_seconds',
  help:
    'From the lead being accepted to the provider accepting the first contact ' +
    '(the call, or the first WhatsApp message), by channel and mode.',
  labelNames: ['channel', 'mode'] as const,
  buckets: [0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120, 300, 900],
  registers: [registry],
});

const providerRequests = new Counter({
  name: 'leadintake_provider_requests_total',
  help:
    'Requests to providers (vapi, twilio, meta, calcom, openai), by outcome: ' +
    'ok, client_error, server_error, timeout, network_error.',
  labelNames: ['provider', 'outcome'] as const,
  registers: [registry],
});

const providerDuration = new Histogram({
  name: 'leadintake_provider_request_duration_seconds',
  help: 'Latency of requests to providers, by provider and outcome.',
  labelNames: ['provider', 'outcome'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

const webhookDeliveries = new Counter({
  name: 'leadintake_webhook_deliveries_total',
  help: 'Outbound webhook attempts, by outcome (succeeded, failed, refused) and mode (live or sandbox).',
  labelNames: ['outcome', 'mode'] as const,
  registers: [registry],
});

export function observeHttpRequest(method: string, route: string, status: number, seconds: number): void {
  const labels = { method, route, status: String(status) };
  httpRequests.inc(labels);
  httpDuration.observe(labels, seconds);
}

export function countLeadCreated(channel: 'voice' | 'whatsapp', livemode: boolean): void {
  leadsCreated.inc({ channel, mode: livemode ? 'live' : 'sandbox' });
}

export type WebhookDeliveryOutcome = 'succeeded' | 'failed' | 'refused';

/** One outbound webhook attempt; `refused`: never sent (an address or scheme the safety rules forbid). */
export function countWebhookDelivery(outcome: WebhookDeliveryOutcome, livemode: boolean): void {
  webhookDeliveries.inc({ outcome, mode: livemode ? 'live' : 'sandbox' });
}

export function countLeadTransition(from: string, to: string): void {
  leadTransitions.inc({ from, to });
}

/** `livemode`: a sandbox lead's simulated contact is counted apart, so that it cannot hide a slow live channel. */
export function observeSpeedToLead(channel: 'voice' | 'whatsapp', livemode: boolean, seconds: number): void {
  speedToLead.observe({ channel, mode: livemode ? 'live' : 'sandbox' }, Math.max(0, seconds));
}

function observeProviderRequest(provider: string, outcome: ProviderOutcome, seconds: number): void {
  providerRequests.inc({ provider, outcome });
  providerDuration.observe({ provider, outcome }, seconds);
}
// The client lives in shared/, below this layer, so it is told where to report rather than
// importing us; whichever process loads its metrics counts its provider requests.
onProviderRequest(observeProviderRequest);
