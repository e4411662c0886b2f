import type { Queryable } from '../db/pool.ts';

// The consent texts a workspace's form has shown, versioned (migrations/049 `consent_texts`): a
// lead keeps the id of the exact wording it agreed to. A new version is made whenever the text
// to show differs from the latest one: when an operator saves a changed text, and also when the
// default wording changes (a new language, a new release), so no lead ever points at a text it
// was not shown.

export interface ConsentText {
  id: number;
  version: number;
  text: string;
}

/** The latest version if its text is `text`, else a new version with it. */
export async function currentConsentText(db: Queryable, workspaceId: string, text: string): Promise<ConsentText> {
  const latest = await latestConsentText(db, workspaceId);
  if (latest && latest.text === text) return latest;
  // Two first requests at once may both try the next version: the loser reads the winner's.
  const { rows } = await db.query(
    `INSERT INTO consent_texts (workspace_id, version, text)
     SELECT $1, coalesce(max(version), 0) + 1, $2 FROM consent_texts WHERE workspace_id = $1
     ON CONFLICT (workspace_id, version) DO NOTHING
     RETURNING id, version, text`,
    [workspaceId, text],
  );
  if (rows[0]) return { id: Number(rows[0].id), version: rows[0].version, text: rows[0].text };
  const again = await latestConsentText(db, workspaceId);
  if (again && again.text === text) return again;
  return currentConsentText(db, workspaceId, text);
}

export async function latestConsentText(db: Queryable, workspaceId: string): Promise<ConsentText | null> {
  const { rows } = await db.query(
    'SELECT id, version, text FROM consent_texts WHERE workspace_id = $1 ORDER BY version DESC LIMIT 1',
    [workspaceId],
  );
  return rows[0] ? { id: Number(rows[0].id), version: rows[0].version, text: rows[0].text } : null;
}

/** A version of this workspace's consent text by id (the one a page showed), or null. */
export async function consentTextById(db: Queryable, workspaceId: string, id: number): Promise<ConsentText | null> {
  const { rows } = await db.query('SELECT id, version, text FROM consent_texts WHERE workspace_id = $1 AND id = $2', [
    workspaceId,
    id,
  ]);
  return rows[0] ? { id: Number(rows[0].id), version: rows[0].version, text: rows[0].text } : null;
}
