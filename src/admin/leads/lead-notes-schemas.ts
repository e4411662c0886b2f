import { z } from 'zod';
import { NOTE_MAX_CHARS } from './lead-notes.ts';

// The internal notes' requests and answers (docs/DASHBOARD.md, "Internal notes"); lead-notes-contracts.ts names them in
// the document.

export const noteBody = z.object({
  text: z.string().trim().min(1).max(NOTE_MAX_CHARS),
  visibleToAgent: z
    .boolean()
    .optional()
    .meta({ description: "Whether the agent may read it (in its prompt's lead data). Default false: operators only." }),
});

export const leadNoteSchema = z.object({
  id: z.int(),
  text: z.string(),
  visibleToAgent: z.boolean(),
  operator: z
    .object({ id: z.uuid(), name: z.string() })
    .nullable()
    .meta({ description: 'The author; null once their account was removed.' }),
  mine: z.boolean().meta({ description: 'Written by you: only its author may delete a note.' }),
  createdAt: z.iso.datetime({ precision: 3 }),
});

export const leadNotesSchema = z.object({ ok: z.literal(true), notes: z.array(leadNoteSchema) });
export const leadNoteBodySchema = z.object({ ok: z.literal(true), note: leadNoteSchema });

export type LeadNotesBody = z.infer<typeof leadNotesSchema>;
export type LeadNoteBody = z.infer<typeof leadNoteBodySchema>;
