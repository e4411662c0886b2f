import { useEffect, useState } from 'react';
import { api, type WorkspaceAccess } from './api.ts';
import { HostedFormSection, type IntakeOverview } from './form-hosted.tsx';
import { PublishableKeysSection } from './form-keys-section.tsx';
import { FormSettingsSection } from './form-settings-section.tsx';
import { SourcesSection } from './form-sources-section.tsx';

// The Form page's intake half (docs/INTAKE.md, "The Form page"): where leads come in besides the
// API — the hosted form and its embed, the form's settings, publishable keys for a site's own
// form, and connected sources (Meta, Google, generic webhooks). Each section loads its own data,
// so a failure of one leaves the others usable.

export function FormIntake({ workspace }: { workspace: WorkspaceAccess }) {
  const base = `/api/admin/workspaces/${encodeURIComponent(workspace.slug)}/intake`;
  const canEdit = workspace.permissions.includes('settings.manage');
  const [overview, setOverview] = useState<IntakeOverview | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    api<IntakeOverview>('GET', base).then(setOverview, (e: Error) => setError(e.message));
  }, [base]);
  return (
    <div className="intake">
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {overview && <HostedFormSection overview={overview} />}
      <FormSettingsSection base={base} canEdit={canEdit} />
      <PublishableKeysSection base={base} canEdit={workspace.permissions.includes('keys.manage')} />
      <SourcesSection base={base} canEdit={canEdit} />
    </div>
  );
}
