import type { ReactNode } from 'react';
import type { Permission, Session, WorkspaceAccess } from './api.ts';
import { AgentPage } from './agent-settings.tsx';
import { FormPage } from './form-builder.tsx';
import { InboxPage } from './inbox.tsx';
import { LeadView } from './lead.tsx';
import { WebhooksPage } from './webhooks.tsx';
import { KeysPage } from './keys.tsx';
import { ProvidersPage } from './providers.tsx';
import { TeamPage } from './team.tsx';
import { LogsPage } from './logs.tsx';
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
    path: 'leads',
    label: 'Leads',
    permission: 'leads.read',
    render: ({ workspace, subpath }) =>
      subpath ? (
        <LeadView key={subpath} workspace={workspace} leadId={subpath} />
      ) : (
        <InboxPage key={workspace.slug} workspace={workspace} />
      ),
  },
  {
    path: 'analytics',
    label: 'Analytics',
    permission: 'analytics.read',
    render: ({ workspace }) => <AnalyticsPage key={workspace.slug} workspace={workspace} />,
  },
  {
    path: 'logs',
    label: 'Logs',
    permission: 'logs.read',
    render: ({ workspace, subpath }) => (
      <LogsPage key={`${workspace.slug}/${subpath ?? ''}`} workspace={workspace} subpath={subpath} />
    ),
  },
  {
    path: 'form',
    label: 'Form',
    permission: 'settings.read',
    render: ({ workspace }) => <FormPage key={workspace.slug} workspace={workspace} />,
  },
  {
    path: 'agent',
    label: 'Agent',
    permission: 'settings.read',
    render: ({ workspace }) => <AgentPage key={workspace.slug} workspace={workspace} />,
  },
  {
    path: 'providers',
    label: 'Providers',
    permission: 'settings.manage',
    render: ({ workspace }) => <ProvidersPage key={workspace.slug} workspace={workspace} />,
  },
  {
    path: 'keys',
    label: 'API keys',
    permission: 'keys.manage',
    render: ({ workspace }) => <KeysPage key={workspace.slug} workspace={workspace} />,
  },
  {
    path: 'webhooks',
    label: 'Webhooks',
    permission: 'webhooks.manage',
    render: ({ workspace }) => <WebhooksPage key={workspace.slug} workspace={workspace} />,
  },
  {
    path: 'team',
    label: 'Team',
    permission: 'team.manage',
    render: ({ workspace, session }) => <TeamPage key={workspace.slug} workspace={workspace} session={session} />,
  },
];
