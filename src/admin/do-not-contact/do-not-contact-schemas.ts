import { z } from 'zod';

// The do-not-contact list's requests and answers (docs/DASHBOARD.md, "Do not contact");
// do-not-contact-contracts.ts names them in the document.

export const DNC_PAGE_MAX = 100;

export const dncListQuery = z.object({
  offset: z.coerce.number().int().min(0).max(1_000_000).optional().meta({ description: 'Entries to skip. Default 0.' }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(DNC_PAGE_MAX)
    .optional()
    .meta({ description: `Entries per page, at most ${DNC_PAGE_MAX}. Default 50.` }),
});

const phone = z.string().trim().min(3).max(32).meta({ description: 'A phone number; stored in E.164 (+digits).' });

export const dncAddBody = z.object({
  phone,
  note: z.string().trim().max(500).optional().meta({ description: 'Why (operators only).' }),
});

export const dncRemoveBody = z.object({ phone });

export const dncLeadBody = z.object({
  note: z.string().trim().max(500).optional().meta({ description: 'Why (operators only).' }),
});

export const dncEntrySchema = z.object({
  phone: z.string().meta({ description: 'E.164.' }),
  source: z.enum(['opt_out', 'operator', 'api']).meta({
    description: "opt_out: the lead opted out; operator: a lead page's button; api: added to the list directly.",
  }),
  note: z.string().nullable(),
  operator: z
    .object({ id: z.uuid(), name: z.string() })
    .nullable()
    .meta({ description: 'Who added it; null for an opt-out or a removed account.' }),
  leadId: z.uuid().nullable().meta({ description: 'The lead it was added from (opt-out, lead page).' }),
  createdAt: z.iso.datetime({ precision: 3 }),
});

export const dncListSchema = z.object({
  ok: z.literal(true),
  numbers: z.array(dncEntrySchema),
  total: z.int().meta({ description: 'Numbers on the list in all.' }),
});

export const dncChangedSchema = z.object({
  ok: z.literal(true),
  phone: z.string().meta({ description: 'The number as stored (E.164).' }),
  changed: z.boolean().meta({ description: 'False: it was already on the list (add) or not on it (remove).' }),
});

export type DncList = z.infer<typeof dncListSchema>;
export type DncChanged = z.infer<typeof dncChangedSchema>;
