import { z } from 'zod';
import { decodeHistoryCursor, HISTORY_PAGE_MAX } from './lead-history-queries.ts';

// The lead page's history in pages (lead-history-routes.ts): requests and responses as zod
// schemas, which are also their OpenAPI entries. The lead page itself carries the newest page
// of the thread and of the timeline with the same item schemas.

const timestamp = z.iso.datetime({ precision: 3 });
const olderCursor = z
  .string()
  .nullable()
  .meta({ description: 'Pass it as `before` for the next older page; null when this page reaches the oldest item.' });

export const historyQuery = z.object({
  before: z
    .string()
    .max(100)
    .refine((c) => decodeHistoryCursor(c) !== null, 'Use the olderCursor of the newer page.')
    .optional()
    .meta({
      description:
        "`olderCursor` of the newer page (or the lead page's `messagesOlderCursor` / `timelineOlderCursor`); " +
        'none: the newest page.',
    }),
  limit: z.coerce.number().int().min(1).max(HISTORY_PAGE_MAX).optional().meta({ description: 'Default 50.' }),
});

export const messageSchema = z.object({
  id: z.int(),
  direction: z.enum(['inbound', 'outbound']),
  kind: z.string(),
  body: z.string(),
  status: z.string(),
  errorCode: z.string().nullable(),
  errorMessage: z.string().nullable(),
  createdAt: timestamp,
  statusAt: timestamp,
});

export const timelineEventSchema = z.object({
  id: z.int(),
  type: z.string(),
  data: z.record(z.string(), z.unknown()),
  at: timestamp,
});

export const trafficEntrySchema = z.object({
  id: z.int(),
  provider: z.string(),
  direction: z
    .enum(['in', 'out'])
    .meta({ description: '`out`: we called the provider; `in`: the provider called us.' }),
  kind: z.string(),
  httpStatus: z.int().nullable(),
  outcome: z.string().nullable(),
  createdAt: timestamp,
});

export const messagePageSchema = z.object({
  ok: z.literal(true),
  messages: z.array(messageSchema).meta({ description: 'Oldest first within the page.' }),
  olderCursor,
});
export const timelinePageSchema = z.object({
  ok: z.literal(true),
  timeline: z.array(timelineEventSchema).meta({ description: 'Oldest first within the page.' }),
  olderCursor,
});
export const trafficPageSchema = z.object({
  ok: z.literal(true),
  entries: z
    .array(trafficEntrySchema)
    .meta({ description: 'Newest first, without payloads (the Logs page shows them, filtered by lead).' }),
  olderCursor,
});

export { olderCursor as olderCursorSchema };
export type MessagePageBody = z.infer<typeof messagePageSchema>;
export type TimelinePageBody = z.infer<typeof timelinePageSchema>;
export type TrafficPageBody = z.infer<typeof trafficPageSchema>;
