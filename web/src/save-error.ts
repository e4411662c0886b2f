import { ApiError } from './api.ts';

// The Form and Agent pages' messages for a refused save.

/**
 * A refused save as the operator can act on it: each issue with the field it names (a question by
 * its number on the page), and a conflict's advice to reload.
 */
export function saveErrorText(e: unknown): string {
  if (!(e instanceof ApiError)) return (e as Error).message;
  const field = (path: string[]) =>
    path[0] === 'questions' && path[1] !== undefined
      ? `Question ${Number(path[1]) + 1}${path[2] ? ` (${path[2]})` : ''}`
      : path.join('.');
  const issues = (e.body.issues ?? []).map((i) => (i.path.length > 0 ? `${field(i.path)}: ${i.message}` : i.message));
  if (issues.length > 0) return `Not saved. ${issues.join('; ')}.`;
  return [e.message, e.body.message].filter(Boolean).join(' ');
}
