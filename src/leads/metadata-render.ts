// The one renderer of a lead's metadata for the agent (docs/AGENT.md): the voice channel sends it
// as the `leadMetadata` variable, the WhatsApp channel puts it under "What else we know
// about this lead". One `key: value` line per pair; non-strings JSON-stringified; null,
// undefined and empty strings dropped.
export function renderMetadata(metadata: Record<string, unknown> | null | undefined): string {
  if (!metadata) return '';
  const lines: string[] = [];
  for (const [key, value] of Object.entries(metadata)) {
    if (value === null || value === undefined || value === '') continue;
    lines.push(`${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
  }
  return lines.join('\n');
}
