import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CSV_HEADER, CSV_MAX_ROWS } from '../../src/admin/leads/inbox-csv.ts';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { insertLead } from '../helpers/agent-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

// The inbox's current filter as CSV (GET /api/admin/workspaces/:slug/leads.csv): every field
// quoted, formulas defused, the inbox's filters, who may export, the audit row, and the cap.

let app: TestApp;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let viewer: AdminSession;
let outsider: AdminSession;
const url = (query = '') => `/api/admin/workspaces/${ws.slug}/leads.csv${query ? `?${query}` : ''}`;

const NAMES = {
  formula: '=HYPERLINK("http://evil.example","click")',
  plus: '+1+cmd|calc',
  minus: '-2+3',
  at: '@SUM(A1)',
  quoted: 'Doe, "Jo"\nsecond line',
  plain: 'Ada Lovelace',
};

/** RFC 4180 parsing: quoted fields with doubled quotes, commas and line breaks inside. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let i = 0;
  while (i < text.length) {
    assert.equal(text[i], '"', `every field is quoted (at ${i})`);
    let field = '';
    i++;
    for (;;) {
      if (text[i] === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (text[i] === '"') {
        i++;
        break;
      } else {
        field += text[i];
        i++;
      }
    }
    row.push(field);
    if (text[i] === ',') i++;
    else {
      assert.equal(text.slice(i, i + 2), '\r\n', 'rows end with CRLF');
      rows.push(row);
      row = [];
      i += 2;
    }
  }
  return rows;
}

before(async () => {
  app = await startTestApp();
  ws = await app.createWorkspace('whatsapp');
  const other = await app.createWorkspace('whatsapp');
  for (const [key, name] of Object.entries(NAMES)) {
    const status = key === 'plain' ? 'booked' : 'in_conversation';
    await insertLead(app.db.pool, ws.workspaceId, { name, status, email: key === 'at' ? '=1+1@example.com' : null });
  }
  const v = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'viewer' }]);
  viewer = (await signIn(app.http, v.email, v.password)).session!;
  const o = await makeOperator(app, [{ workspaceId: other.workspaceId, role: 'owner' }]);
  outsider = (await signIn(app.http, o.email, o.password)).session!;
});
after(async () => {
  await app?.close();
});

describe('the inbox as CSV', () => {
  test('a file with a header, every field quoted, and each name back exactly, formulas defused', async () => {
    const r = await admin(app.http, viewer, 'GET', url());
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/csv; charset=utf-8/);
    const disposition = new RegExp(`^attachment; filename="leads-${ws.slug}-\\d{4}-\\d{2}-\\d{2}\\.csv"$`);
    assert.match(String(r.headers['content-disposition']), disposition);
    assert.equal(r.headers['x-leads-truncated'], 'false');
    const text = r.body as string;
    assert.ok(text.startsWith('\uFEFF'), 'a byte-order mark');
    const rows = parseCsv(text.slice(1));
    assert.deepEqual(rows[0], CSV_HEADER);
    assert.equal(rows[0]![0], 'Name');
    assert.equal(rows.length, 1 + Object.keys(NAMES).length);
    const names = rows
      .slice(1)
      .map((row) => row[0])
      .sort();
    assert.deepEqual(
      names,
      [`'${NAMES.plus}`, `'${NAMES.minus}`, `'${NAMES.formula}`, `'${NAMES.at}`, NAMES.plain, NAMES.quoted].sort(),
    );
    for (const row of rows.slice(1)) {
      for (const cell of row) assert.doesNotMatch(cell, /^[=+\-@\t\r]/, `no cell starts a formula: ${cell}`);
    }
    // Phone numbers start with "+": they are defused too, and still readable.
    assert.ok(rows.slice(1).every((row) => row[1]!.startsWith("'+")));
    assert.ok(rows.slice(1).some((row) => row[2] === "'=1+1@example.com"));
    assert.ok(rows.slice(1).every((row) => row[4] === 'WhatsApp'));
  });

  test("the inbox's filter: status, search and the Analytics page's filters", async () => {
    const names = async (query: string) => {
      const r = await admin(app.http, viewer, 'GET', url(query));
      assert.equal(r.status, 200, String(r.body));
      return parseCsv((r.body as string).slice(1))
        .slice(1)
        .map((row) => row[0]);
    };
    assert.deepEqual(await names('status=booked'), [NAMES.plain]);
    assert.deepEqual(await names('q=Lovelace'), [NAMES.plain]);
    assert.deepEqual(await names('status=booked&handledBy=person'), []);
    assert.deepEqual(await names('status=booked&handledBy=ai'), [NAMES.plain]);
    assert.deepEqual(await names('to=2020-01-01'), []);
    const bad = await admin(app.http, viewer, 'GET', url('status=lost'));
    assert.equal(bad.status, 400);
  });

  test('only members who may read leads; each export is in the audit log', async () => {
    assert.equal((await admin(app.http, null, 'GET', url())).status, 401);
    const foreign = await admin(app.http, outsider, 'GET', url());
    assert.equal(foreign.status, 404);
    assert.doesNotMatch(String(foreign.body), /Lovelace/);
    const { rows } = await app.db.pool.query(
      `SELECT count(*)::int AS n FROM audit_events WHERE workspace_id = $1 AND type = 'leads.exported'`,
      [ws.workspaceId],
    );
    assert.ok(rows[0].n >= 1);
  });

  test(`at most ${CSV_MAX_ROWS} rows, and the response says it was cut`, async () => {
    const big = await app.createWorkspace('whatsapp');
    await app.db.pool.query(
      `INSERT INTO leads (workspace_id, name, phone, phone_normalized, consented_at, status)
       SELECT $1, 'Lead ' || g, '+4930' || (1000000 + g), '+4930' || (1000000 + g), now(), 'new'
         FROM generate_series(1, $2) g`,
      [big.workspaceId, CSV_MAX_ROWS + 1],
    );
    const op = await makeOperator(app, [{ workspaceId: big.workspaceId, role: 'agent' }]);
    const s = (await signIn(app.http, op.email, op.password)).session!;
    const r = await admin(app.http, s, 'GET', `/api/admin/workspaces/${big.slug}/leads.csv`);
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-leads-truncated'], 'true');
    assert.equal((r.body as string).split('\r\n').length - 2, CSV_MAX_ROWS);
  });
});
