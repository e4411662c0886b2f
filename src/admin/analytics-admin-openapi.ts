import type { OpenApiBuilder, Ref } from '../http/openapi-builder.ts';
import { ANALYTICS_PERIODS, MAX_PERIOD_DAYS, analyticsSchema } from './analytics-admin-schemas.ts';

// The Analytics page's admin API (docs/DASHBOARD.md, "Analytics") in the OpenAPI document: every
// role of the workspace reads it with its session cookie.

type Json = Record<string, unknown>;

const SLUG = { name: 'slug', in: 'path', required: true, description: 'The workspace.', schema: { type: 'string' } };
const day = (name: string, description: string) => ({ name, in: 'query', required: false, description, schema: { type: 'string', format: 'date' } });

export function describeAnalyticsAdminApi(doc: OpenApiBuilder, shared: { error: Ref }): void {
  const body = doc.output('AdminAnalytics', analyticsSchema);
  const json = (description: string, schema: Ref): Json => ({ description, content: { 'application/json': { schema } } });
  const text: Record<string, string> = {
    '400': 'A bad period: unknown preset, from/to without period=custom, a missing or malformed date, to before from, or longer than a year.',
    '401': 'Not signed in, or the session expired after inactivity.',
    '404': 'Not a workspace of the operator.',
    '500': 'An unanticipated failure.',
  };
  doc.operation('get', '/api/admin/workspaces/{slug}/analytics', {
    tags: ['Dashboard'], security: [{ sessionCookie: [] }], operationId: 'getAnalytics',
    summary: 'Funnel, speed to lead and bookings of the leads created in a period',
    description: "Days are the workspace's local days (its agent's time zone, default UTC). The presets end today and include it.",
    parameters: [
      SLUG,
      { name: 'period', in: 'query', required: false, description: 'Default 30d.', schema: { type: 'string', enum: [...ANALYTICS_PERIODS] } },
      day('from', `period=custom: the first local day (included); at most ${MAX_PERIOD_DAYS} days in all.`),
      day('to', 'period=custom: the last local day (included).'),
      { name: 'sandbox', in: 'query', required: false, description: 'true: count sandbox leads too.', schema: { type: 'string', enum: ['true', 'false'] } },
    ],
    responses: { '200': json('The figures.', body), ...Object.fromEntries(Object.entries(text).map(([c, t]) => [c, json(t, shared.error)])) },
  });
}
