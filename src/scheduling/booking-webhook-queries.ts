import type { LeadStatus } from '../leads/lead-state.ts';
import type { Queryable } from '../db/pool.ts';

// The lead a Cal.com delivery concerns, always within the workspace whose secret signed it.

export interface BookedLead {
  id: string;
  status: LeadStatus;
  bookingUid: string | null;
  bookingStart: Date | null;
}

const COLUMNS = 'id, status, booking_uid, booking_start';

function fromRow(r: Record<string, any> | undefined): BookedLead | null {
  return r ? { id: r.id, status: r.status, bookingUid: r.booking_uid, bookingStart: r.booking_start } : null;
}

/** Locked, so concurrent deliveries about one lead apply one after the other. */
export async function lockLeadByBookingUid(
  db: Queryable,
  workspaceId: string,
  bookingUid: string,
): Promise<BookedLead | null> {
  const { rows } = await db.query(
    `SELECT ${COLUMNS} FROM leads WHERE workspace_id = $1 AND booking_uid = $2 ORDER BY created_at LIMIT 1 FOR UPDATE`,
    [workspaceId, bookingUid],
  );
  return fromRow(rows[0]);
}

/**
 * The lead named in the booking's metadata, only while it holds no booking: that is the case of
 * a booking made but never recorded (a crash after Cal.com accepted it). A lead that holds some
 * other booking must not be pointed at this one by a stale or out-of-order delivery.
 */
export async function lockUnbookedLead(db: Queryable, workspaceId: string, leadId: string): Promise<BookedLead | null> {
  const { rows } = await db.query(
    `SELECT ${COLUMNS} FROM leads WHERE workspace_id = $1 AND id = $2 AND booking_uid IS NULL FOR UPDATE`,
    [workspaceId, leadId],
  );
  return fromRow(rows[0]);
}

/** For timeline-only events: the lead holding the booking, else the one named in its metadata. */
export async function findLeadForBooking(
  db: Queryable,
  workspaceId: string,
  bookingUid: string,
  leadId: string | null,
): Promise<BookedLead | null> {
  const { rows } = await db.query(
    `SELECT ${COLUMNS} FROM leads WHERE workspace_id = $1 AND (booking_uid = $2 OR id = $3)
      ORDER BY (booking_uid = $2) DESC NULLS LAST, created_at LIMIT 1`,
    [workspaceId, bookingUid, leadId],
  );
  return fromRow(rows[0]);
}

/** Points the lead at its new booking; the status is left as it is. */
export async function moveBooking(
  db: Queryable,
  leadId: string,
  bookingUid: string,
  bookingStart: Date,
): Promise<void> {
  await db.query('UPDATE leads SET booking_uid = $2, booking_start = $3, updated_at = now() WHERE id = $1', [
    leadId,
    bookingUid,
    bookingStart,
  ]);
}
