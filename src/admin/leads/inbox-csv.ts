import type { InboxRow } from './inbox-queries.ts';

// The inbox as CSV (RFC 4180: comma, CRLF, every field quoted, quotes doubled), safe to open in
// a spreadsheet: a cell that starts with = + - @ (or a tab or carriage return) is a formula to
// Excel, LibreOffice and Google Sheets, so it gets a leading apostrophe, which they show as text
// (OWASP, "CSV Injection"). Lead names and e-mails are typed by anyone who submits a form.

/** The most rows one export holds; the response says when the filter matched more. */
export const CSV_MAX_ROWS = 10_000;

const FORMULA_START = /^[=+\-@\t\r]/;

/** One field: formula-safe and quoted. */
export function csvCell(value: Cell): string {
  const text = value === null || value === undefined ? '' : String(value);
  const safe = FORMULA_START.test(text) ? `'${text}` : text;
  return `"${safe.replaceAll('"', '""')}"`;
}

type Cell = string | number | boolean | null | undefined;

export const csvLine = (cells: Cell[]): string => `${cells.map(csvCell).join(',')}\r\n`;

export const CSV_HEADER = [
  'Name',
  'Phone',
  'E-mail',
  'Status',
  'Channel',
  'Sandbox',
  'Owner',
  'Created',
  'Last activity',
  'Speed to lead (s)',
];

const OWNER = (r: InboxRow): string => (r.owner.kind === 'operator' ? r.owner.name : r.owner.kind === 'ai' ? 'AI' : '');

export function csvRow(r: InboxRow, channel: 'voice' | 'whatsapp'): string {
  return csvLine([
    r.name,
    r.phone,
    r.email,
    r.status,
    channel === 'whatsapp' ? 'WhatsApp' : 'Voice',
    r.livemode ? 'no' : 'yes',
    OWNER(r),
    r.createdAt,
    r.lastActivityAt,
    r.speedToLeadSeconds,
  ]);
}
