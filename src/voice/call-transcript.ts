// The transcript of `voiceCall` (docs/API.md): turns separated by blank lines, each prefixed `Assistant:` or
// `Lead:`. Built from Vapi's message list when there is one (system prompts, tool calls and tool
// results left out), else from its `AI:` / `User:` text. A turn is everything one side says
// before the other speaks, so consecutive messages of one speaker are joined; whitespace inside a
// turn (line breaks included) becomes single spaces, so a blank line only ever separates turns.

type Speaker = 'Assistant' | 'Lead';

// Role names vary between Vapi's formats (`bot` in artifact.messages, `assistant` in the OpenAI
// format and the docs' example); anything else is not speech.
const ROLES: Record<string, Speaker> = {
  bot: 'Assistant',
  assistant: 'Assistant',
  ai: 'Assistant',
  user: 'Lead',
  customer: 'Lead',
  human: 'Lead',
};
const LINE = /^\s*(AI|Assistant|Bot|User|Customer|Lead)\s*:\s?(.*)$/i;

/** null when neither source holds anything said. */
export function buildTranscript(messages: unknown, text: unknown): string | null {
  const fromMessages = Array.isArray(messages) ? turnsFromMessages(messages) : [];
  const turns = fromMessages.length > 0 ? fromMessages : typeof text === 'string' ? turnsFromText(text) : [];
  return turns.length > 0 ? turns.map((t) => `${t.speaker}: ${t.text}`).join('\n\n') : null;
}

/** A stored transcript split into its turns, speaker named (the lead page shows them so); [] for none. */
export function transcriptTurns(transcript: string | null): Turn[] {
  return transcript ? turnsFromText(transcript) : [];
}

export interface Turn {
  speaker: Speaker;
  text: string;
}

function turnsFromMessages(messages: unknown[]): Turn[] {
  const turns: Turn[] = [];
  for (const m of messages) {
    if (typeof m !== 'object' || m === null) continue;
    const { role, message, content } = m as { role?: unknown; message?: unknown; content?: unknown };
    const speaker = typeof role === 'string' ? ROLES[role.toLowerCase()] : undefined;
    const said = typeof message === 'string' ? message : typeof content === 'string' ? content : undefined;
    if (speaker && said !== undefined) add(turns, speaker, said);
  }
  return turns;
}

function turnsFromText(text: string): Turn[] {
  const turns: Turn[] = [];
  let current: Speaker | null = null;
  for (const line of text.split(/\r?\n/)) {
    const m = LINE.exec(line);
    if (m) {
      const label = m[1]!.toLowerCase();
      current = label === 'user' || label === 'customer' || label === 'lead' ? 'Lead' : 'Assistant';
      add(turns, current, m[2] ?? '');
    } else if (current) {
      add(turns, current, line); // a line break inside what was said
    }
  }
  return turns;
}

function add(turns: Turn[], speaker: Speaker, said: string): void {
  const text = said.replace(/\s+/g, ' ').trim();
  if (text === '') return;
  const last = turns.at(-1);
  if (last && last.speaker === speaker) last.text = `${last.text} ${text}`;
  else turns.push({ speaker, text });
}
