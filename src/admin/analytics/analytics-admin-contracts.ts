import { named } from '../../http/route-contract.ts';
import { adminRoute, answer, errorResponses, slugParams } from '../admin-contract.ts';
import { analyticsQuery, analyticsSchema } from './analytics-admin-schemas.ts';

// The Analytics page's route (docs/DASHBOARD.md, "Analytics"; analytics-admin-routes.ts): every
// role of the workspace reads it with its session cookie.

const errors = errorResponses({
  '400':
    'A bad period: unknown preset, from/to without period=custom, a missing or malformed date, ' +
    'to before from, or longer than a year.',
  '401': 'Not signed in, or the session expired after inactivity.',
  '404': 'Not a workspace of the operator.',
  '500': 'An unanticipated failure.',
});

export const analyticsRoute = adminRoute({
  method: 'GET',
  url: '/api/admin/workspaces/:slug/analytics',
  operationId: 'getAnalytics',
  summary: 'Funnel, speed to lead and bookings of the leads created in a period',
  description:
    "Days are the workspace's local days (its agent's time zone, default UTC). The presets end today and include it.",
  params: slugParams,
  query: analyticsQuery,
  responses: {
    '200': answer('The figures.', named('AdminAnalytics', analyticsSchema)),
    ...errors('400', '401', '404', '500'),
  },
});
