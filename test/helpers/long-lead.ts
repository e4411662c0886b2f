import type { Queryable } from '../../src/db/pool.ts';

// A lead with a long history, written straight into the tables (thousands of rows through the
// API would take minutes): messages whose times tie in threes, are to the microsecond and are
// not in id order, events likewise, and provider traffic with large payloads.

export const LONG = { messages: 1003, events: 1007, traffic: 300 };

export async function seedLongHistory(db: Queryable, leadId: string, workspaceId: string): Promise<void> {
  const counted = await db.query(`SELECT count(*)::int AS n FROM lead_events WHERE lead_id = $1`, [leadId]);
  const existing = counted.rows[0].n as number;
  // Times spread over the last days, not in the order of the ids; three rows share each second,
  // and odd rows are one microsecond later (a millisecond cursor would lose them).
  const at = (g: string) => `now() - interval '3 days' + ((${g} * 37) % 1009 / 3) * interval '1 second'
    + (${g} % 2) * interval '1 microsecond'`;
  await db.query(
    `INSERT INTO whatsapp_messages
       (lead_id, direction, provider, kind, body, status, idempotency_key, created_at, status_at)
     SELECT $1::uuid, CASE WHEN g % 2 = 0 THEN 'inbound' ELSE 'outbound' END, 'twilio', 'text', 'Message number ' || g,
            CASE WHEN g % 2 = 0 THEN 'received' ELSE 'delivered' END,
            CASE WHEN g % 2 = 1 THEN 'long-' || $1::text || '-' || g END, ${at('g')}, ${at('g')}
       FROM generate_series(1, $2::int) g`,
    [leadId, LONG.messages],
  );
  await db.query(
    `INSERT INTO lead_events (lead_id, type, data, at)
     SELECT $1, 'message.received', jsonb_build_object('n', g), ${at('g')} FROM generate_series(1, $2::int) g`,
    [leadId, LONG.events - existing],
  );
  await db.query(
    `INSERT INTO integration_events
       (workspace_id, lead_id, provider, direction, kind, http_status, outcome, payload, created_at)
     SELECT $1, $2, 'twilio', 'out', 'POST /Messages.json', 201, 'ok',
            jsonb_build_object('body', repeat('x', 16000)), ${at('g')}
       FROM generate_series(1, $3::int) g`,
    [workspaceId, leadId, LONG.traffic],
  );
}
