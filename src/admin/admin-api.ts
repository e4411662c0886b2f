import type { ApiPart } from '../http/route-contract.ts';
import { DASHBOARD_ROUTES } from './leads/admin-contracts.ts';
import { analyticsRoute } from './analytics/analytics-admin-contracts.ts';
import { FORM_AGENT_ROUTES } from './settings/form-agent-admin-contracts.ts';
import { exportCsvRoute } from './leads/inbox-csv-contracts.ts';
import { getInboxSettingsRoute, saveInboxSettingsRoute } from './leads/inbox-settings.ts';
import { LEAD_HISTORY_ROUTES } from './leads/lead-history-contracts.ts';
import { LEAD_NOTES_ROUTES } from './leads/lead-notes-contracts.ts';
import { CONTACT_PLAN_ROUTES } from './leads/contact-plan-contracts.ts';
import { DO_NOT_CONTACT_ROUTES } from './do-not-contact/do-not-contact-contracts.ts';
import { INTAKE_ROUTES } from './intake/intake-admin-contracts.ts';
import { INTAKE_SETTINGS_ROUTES } from './intake/intake-settings-admin-contracts.ts';
import { INTAKE_SOURCE_ROUTES } from './intake/intake-source-admin-contracts.ts';
import { LOGS_ROUTES } from './logs/logs-admin-contracts.ts';
import { SETTINGS_ROUTES } from './settings/settings-admin-contracts.ts';
import { TEAM_ROUTES } from './team/team-admin-contracts.ts';
import { WEBHOOK_ROUTES } from './webhooks/webhook-admin-contracts.ts';

// The admin API (docs/DASHBOARD.md) in the OpenAPI document: every route the dashboard's page
// calls, so every action is scriptable with a session cookie and its CSRF token. A new admin
// route's contract is added here (test/api/openapi.test.ts checks that every registered route is).

export const ADMIN_API: ApiPart = {
  routes: [
    ...DASHBOARD_ROUTES,
    ...WEBHOOK_ROUTES,
    ...SETTINGS_ROUTES,
    ...TEAM_ROUTES,
    ...LOGS_ROUTES,
    ...FORM_AGENT_ROUTES,
    getInboxSettingsRoute,
    saveInboxSettingsRoute,
    analyticsRoute,
    exportCsvRoute,
    ...LEAD_HISTORY_ROUTES,
    ...LEAD_NOTES_ROUTES,
    ...CONTACT_PLAN_ROUTES,
    ...DO_NOT_CONTACT_ROUTES,
    ...INTAKE_ROUTES,
    ...INTAKE_SETTINGS_ROUTES,
    ...INTAKE_SOURCE_ROUTES,
  ],
};
