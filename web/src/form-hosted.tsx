import type { Schemas } from './api.ts';
import { CopyButton } from './copy.tsx';

// The Form page's "Hosted form" section (docs/INTAKE.md, "The Form page"): the form's own page to
// link to, a preview of it, and the snippet that embeds it into any site.

export type IntakeOverview = Schemas['AdminIntakeOverview'];

export function HostedFormSection({ overview }: { overview: IntakeOverview }) {
  return (
    <section aria-labelledby="hosted-h" className="intake-section">
      <h2 id="hosted-h">Hosted form</h2>
      <p>
        A page with the form, ready to link to from an ad, a bio or an e-mail. Leads it sends come in like any other,
        with source <em>Hosted form</em>.
      </p>
      <p className="intake-url">
        <a href={overview.formUrl} target="_blank" rel="noopener noreferrer">
          {overview.formUrl}
        </a>{' '}
        <CopyButton text={overview.formUrl} label="Copy the hosted form's link" />
      </p>
      <details className="form-preview">
        <summary>Preview</summary>
        <p className="hint">The live form: what you send here becomes a lead.</p>
        <iframe title="Preview of the hosted form" src={overview.previewPath} loading="lazy" />
      </details>
      <h3 id="embed-h">Embed it in your site</h3>
      <p>Paste this where the form should appear. The form keeps its own page's checks and look, and grows to fit.</p>
      <pre role="region" aria-labelledby="embed-h" tabIndex={0}>
        {overview.embedSnippet}
      </pre>
      <CopyButton text={overview.embedSnippet} label="Copy the embed snippet" />
    </section>
  );
}
