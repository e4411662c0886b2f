import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES } from '../../webhooks/webhook-payload.ts';

// Requests and responses of the dashboard's Webhooks page (docs/DASHBOARD.md, "Webhooks"): the
// operations of `leadintake webhook …` as admin API bodies.

const timestamp = z.iso.datetime({ precision: 3 });

export const addEndpointBody = z.object({
  url: z.string().trim().min(1).max(2000),
  eventTypes: z
    .array(z.enum(WEBHOOK_EVENT_TYPES))
    .max(WEBHOOK_EVENT_TYPES.length)
    .default([])
    .meta({ description: 'Empty: every event type.' }),
});
export const replayBody = z.object({
  deliveryId: z
    .string()
    .regex(/^[0-9]{1,18}$/)
    .optional()
    .meta({ description: 'One failed delivery; without it, every failed delivery of the endpoint.' }),
});
export const deliveriesQuery = z.object({ limit: z.coerce.number().int().min(1).max(200).optional() });

export const endpointSchema = z.object({
  id: z.uuid(),
  url: z.string(),
  eventTypes: z.array(z.string()).meta({ description: '`["*"]`: every event type.' }),
  enabled: z.boolean(),
  disabledReason: z.string().nullable(),
  disabledAt: timestamp.nullable(),
  failingSince: timestamp.nullable(),
  createdAt: timestamp,
});
export const endpointListSchema = z.object({
  ok: z.literal(true),
  endpoints: z.array(endpointSchema),
  eventTypes: z.array(z.string()).meta({ description: 'The event types an endpoint may subscribe to.' }),
});
export const endpointAddedSchema = z.object({
  ok: z.literal(true),
  endpoint: endpointSchema,
  secret: z.string().meta({ description: 'The signing secret: shown this once, never again.' }),
});
export const secretRotatedSchema = z.object({
  ok: z.literal(true),
  secret: z.string().meta({ description: 'The new signing secret: shown this once, never again.' }),
  previousValidUntil: timestamp.meta({ description: 'Until then the previous secret signs too.' }),
});
export const deliveryLogSchema = z.object({
  ok: z.literal(true),
  deliveries: z.array(
    z.object({
      deliveryId: z.string(),
      eventType: z.string(),
      messageId: z.string(),
      leadId: z.string(),
      status: z.string(),
      attempts: z.array(
        z.object({
          at: z.string(),
          outcome: z.string(),
          statusCode: z.number().nullable(),
          latencyMs: z.number(),
          response: z.string(),
        }),
      ),
    }),
  ),
});
export const replayedSchema = z.object({
  ok: z.literal(true),
  replayed: z.number().int().meta({ description: 'How many failed deliveries were sent again.' }),
});
