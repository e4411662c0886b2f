import type { ReactNode } from 'react';
import type { Permission, Session, WorkspaceAccess } from './api.ts';
import { InboxPage } from './inbox.tsx';
import { LeadView } from './lead.tsx';
import { WebhooksPage } from './webhooks.tsx';
import { AnalyticsPage } from './analytics.tsx';

// The workspace's pages, in the order of the navigation bar: /admin/<slug>/<path>[/<subpath>].
// A page is listed (and reachable) only when the operator's role has its permission; the API
// checks the same permission on every request.

export interface SectionProps {
  workspace: WorkspaceAccess;
  session: Session;
  /** The path segment after the section's own (a lead's id on /leads/<id>). */
  subpath: string | undefined;
}

export interface Section {
  path: string;
  label: string;
  permission: Permission;
  render: (props: SectionProps) => ReactNode;
}

export const SECTIONS: Section[] = [
  {
    path: 'leads', label: 'Leads', permission: 'leads.read',
    render: ({ workspace, subpath }) => (subpath ? <LeadView key={subpath} workspace={workspace} leadId={subpath} /> : <InboxPage key={workspace.slug} workspace={workspace} />),
  },
  { path: 'analytics', label: 'Analytics', permission: 'analytics.read', render: ({ workspace }) => <AnalyticsPage key={workspace.slug} workspace={workspace} /> },
  { path: 'webhooks', label: 'Webhooks', permission: 'webhooks.manage', render: ({ workspace }) => <WebhooksPage key={workspace.slug} workspace={workspace} /> },
];
