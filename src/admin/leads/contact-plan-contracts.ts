import { named } from '../../http/route-contract.ts';
import { adminEmptyBody, adminRoute, answer, csrfHeaders, errorResponses, leadParams } from '../admin-contract.ts';
import { actionResultSchema } from './admin-schemas.ts';

// The lead page's Follow-ups panel (docs/DASHBOARD.md, "Follow-ups"; contact-plan-routes.ts):
// an operator makes the pending attempt now, skips it, or stops the plan. Each is audited.

const errors = errorResponses({
  '400': 'Bad JSON.',
  '401': 'Not signed in, or the session expired after inactivity.',
  '403': 'CSRF token missing or wrong, or the role does not allow the action (viewers).',
  '404': 'Not a workspace of the operator, or no such lead in it.',
  '409':
    'Not possible now (`message` says why): the lead is no longer new or in conversation, the agent is switched off, ' +
    'the number is on the do-not-contact list, an attempt is being made, or there is nothing to skip or stop.',
  '413': 'The body is over 64 KiB.',
  '415': 'The body is not JSON.',
  '500': 'An unanticipated failure.',
});

const planAction = (path: string, operationId: string, summary: string, description: string) =>
  adminRoute({
    method: 'POST',
    url: `/api/admin/workspaces/:slug/leads/:id/contact-plan/${path}`,
    operationId,
    summary,
    description,
    params: leadParams,
    headers: csrfHeaders,
    body: adminEmptyBody,
    responses: {
      '200': answer("Done: the lead's status (unchanged).", named('AdminActionResult', actionResultSchema)),
      ...errors('400', '401', '403', '404', '409', '413', '415', '500'),
    },
  });

export const callNowRoute = planAction(
  'call-now',
  'contactPlanCallNow',
  'Follow-ups: make the next attempt now',
  'The pending attempt (or a call on voice, the first-contact template on WhatsApp when none is pending) is made ' +
    'at once, outside the calling window too; never past the kill switch or the do-not-contact list. ' +
    'Only for a lead that is new or in conversation.',
);
export const skipRoute = planAction(
  'skip',
  'contactPlanSkip',
  'Follow-ups: skip the pending attempt',
  'The pending attempt is not made (timeline `contact.skipped`); the plan ends at its time instead, ' +
    'and the lead goes to a person if it was not reached by then.',
);
export const stopRoute = planAction(
  'stop',
  'contactPlanStop',
  'Follow-ups: stop',
  "The plan ends (`operator_stopped`) and its pending attempt is cancelled; the lead's status stays as it is.",
);

export const CONTACT_PLAN_ROUTES = [callNowRoute, skipRoute, stopRoute];
