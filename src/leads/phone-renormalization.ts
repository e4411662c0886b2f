import type { Queryable } from '../db/pool.ts';
import type { Logger } from '../shared/logger.ts';
import { normalizePhone } from './phone.ts';

// Migration 007's data step (run by src/db/migrate.ts after migrations/007_phone_e164.sql, in
// the same transaction): every lead's phone_normalized is recomputed from the phone as submitted
// with normalizePhone, the rule new submissions follow. Before 007 it was "+" and the digits, so
// "0049 30 2345 6789" was +00493023456789 and a different lead from "+49 30 2345 6789".
//
// Two leads of a workspace that now are the same number are both kept, never merged or dropped:
// the one that already had that value, else the older one, gets the E.164 number (a new
// submission of it answers 409 with that lead); each other one gets `<E.164>#<its own id>`, which
// no submission can produce (so the unique index holds) and no provider accepts (so nobody is
// called or written to twice). Each of those is a row of lead_phone_collisions and a warning in
// the migration's log. A number that is no possible one keeps its old value (it could never be
// dialled anyway), unless a possible number took that value: then it is marked the same way.

export interface PhoneCollision {
  workspaceId: string;
  /** The lead that keeps the number; `leadId` was marked. */
  keptLeadId: string;
  leadId: string;
}

interface Row {
  id: string;
  workspace_id: string;
  phone: string;
  phone_normalized: string;
  country: string | null;
}

export async function renormalizeLeadPhones(
  db: Queryable,
  log?: Logger,
): Promise<{ changed: number; collisions: PhoneCollision[] }> {
  const { rows } = await db.query<Row>(
    `SELECT l.id, l.workspace_id, l.phone, l.phone_normalized, w.agent->>'defaultCountry' AS country
       FROM leads l JOIN workspaces w ON w.id = l.workspace_id
      ORDER BY l.created_at, l.id`,
  );
  const target = new Map<string, string>();
  const collisions: PhoneCollision[] = [];
  // Per workspace and E.164 number: its leads, oldest first (the query's order).
  const groups = new Map<string, Row[]>();
  const impossible: Row[] = [];
  for (const r of rows) {
    const e164 = normalizePhone(r.phone, r.country ?? undefined);
    if (e164 === null) impossible.push(r);
    else groups.set(`${r.workspace_id} ${e164}`, [...(groups.get(`${r.workspace_id} ${e164}`) ?? []), r]);
  }
  const winners = new Map<string, string>(); // `${workspace} ${e164}` → lead id
  for (const [key, leads] of groups) {
    const e164 = key.slice(key.indexOf(' ') + 1);
    const kept = leads.find((l) => l.phone_normalized === e164) ?? leads[0]!;
    winners.set(key, kept.id);
    for (const l of leads) {
      if (l === kept) target.set(l.id, e164);
      else {
        target.set(l.id, `${e164}#${l.id}`);
        collisions.push({ workspaceId: l.workspace_id, keptLeadId: kept.id, leadId: l.id });
      }
    }
  }
  for (const r of impossible) {
    const taken = winners.get(`${r.workspace_id} ${r.phone_normalized}`);
    if (taken === undefined) target.set(r.id, r.phone_normalized);
    else {
      target.set(r.id, `${r.phone_normalized}#${r.id}`);
      collisions.push({ workspaceId: r.workspace_id, keptLeadId: taken, leadId: r.id });
    }
  }
  const changed = rows
    .filter((r) => target.get(r.id) !== r.phone_normalized)
    .map((r) => ({ id: r.id, value: target.get(r.id)! }));
  if (changed.length > 0) {
    // The unique index is checked row by row: first every changing lead gives its value up.
    await db.query(`UPDATE leads SET phone_normalized = '#' || id WHERE id = ANY($1::uuid[])`, [
      changed.map((c) => c.id),
    ]);
    await db.query(
      `UPDATE leads l SET phone_normalized = x.value
        FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, value text) WHERE l.id = x.id`,
      [JSON.stringify(changed)],
    );
  }
  if (collisions.length > 0) {
    await db.query(
      `INSERT INTO lead_phone_collisions (lead_id, kept_lead_id, workspace_id)
       SELECT "leadId", "keptLeadId", "workspaceId"
       FROM jsonb_to_recordset($1::jsonb) AS x("leadId" uuid, "keptLeadId" uuid, "workspaceId" uuid)`,
      [JSON.stringify(collisions)],
    );
    // Ids only: the numbers are personal data and stay in the database.
    log?.warn(
      { collisions },
      `phone numbers re-normalised to E.164: ${collisions.length} lead(s) share their number with an older lead ` +
        'of their workspace; both kept, see lead_phone_collisions',
    );
  }
  log?.info({ leads: rows.length, changed: changed.length }, 'phone numbers re-normalised to E.164');
  return { changed: changed.length, collisions };
}
