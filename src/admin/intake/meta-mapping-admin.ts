import { DEFAULT_META_MAPPING, type MappingTarget } from '../../intake/meta/meta-lead-mapping.ts';
import { readMetaConfig } from '../../intake/meta/meta-source-settings.ts';
import { AppError } from '../../shared/errors.ts';
import { agentConfigOf, type AgentConfig } from '../../workspaces/agent-config.ts';
import type { MetaSettingsAnswer } from './intake-source-admin-schemas.ts';

// A Meta source's field mapping on the Form page (docs/INTAKE.md, "Meta Lead Ads"). The shape of
// a target is the intake's own schema (meta-lead-mapping.ts, checked by the route's body); what
// only the workspace knows is checked here: a `question:<id>` target must be a question of the
// workspace's form now, or the answers would land under an id no lead page can label.

/** What the page edits: the mapping the intake applies (defaults with the saved one over them). */
export function metaSettingsView(config: Record<string, unknown>): MetaSettingsAnswer {
  const c = readMetaConfig(config);
  return {
    fieldMapping: { ...DEFAULT_META_MAPPING, ...c.fieldMapping },
    defaults: { ...DEFAULT_META_MAPPING },
    organicToSandbox: c.organicToSandbox === true,
  };
}

/** Throws validation_failed naming each Meta field whose target question is not on the form. */
export function requireFormQuestions(
  workspace: { name: string; agent: AgentConfig | null },
  mapping: Record<string, MappingTarget>,
): void {
  const known = new Set(agentConfigOf(workspace).questions.map((q) => q.id));
  const issues = Object.entries(mapping).flatMap(([field, target]) => {
    if (!target.startsWith('question:') || known.has(target.slice('question:'.length))) return [];
    const id = target.slice('question:'.length);
    return [{ path: ['fieldMapping', field], message: `${field}: ${id} is not a question of this workspace's form.` }];
  });
  if (issues.length > 0) throw new AppError('validation_failed', { issues });
}
