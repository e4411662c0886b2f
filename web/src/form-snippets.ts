import type { Question } from './settings-types.ts';

// What the form builder shows an integrator beside the questions: the `formResponses` object with
// the current ids, and an HTML form that posts to the integrator's own back end (which holds the
// API key and calls the public API), never to leadintake straight from the browser.

export function formResponsesExample(questions: Question[]): string {
  const example = (q: Question) => (q.type === 'choice' ? (q.options?.[0] ?? '') : q.type === 'number' ? '42' : '…');
  return JSON.stringify(
    { formResponses: Object.fromEntries(questions.filter((q) => q.id).map((q) => [q.id, example(q)])) },
    null,
    2,
  );
}

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function field(q: Question): string {
  const required = q.required ? ' required' : '';
  if (q.type === 'choice') {
    const options = (q.options ?? []).map((o) => `      <option>${escapeHtml(o)}</option>`).join('\n');
    return (
      `  <label>${escapeHtml(q.label)}\n    <select name="${q.id}"${required}>\n${options}\n` +
      '    </select>\n  </label>'
    );
  }
  const type = q.type === 'number' ? ' type="number"' : '';
  return `  <label>${escapeHtml(q.label)} <input name="${q.id}"${type}${required}></label>`;
}

export function htmlSnippet(questions: Question[], leadsUrl: string): string {
  return [
    '<!-- Posts to YOUR back end, which adds the API key and calls leadintake. -->',
    '<form method="post" action="/your-backend/leads">',
    '  <label>Name <input name="name" required></label>',
    '  <label>Phone <input name="phone" type="tel" required></label>',
    '  <label>E-mail <input name="email" type="email"></label>',
    ...questions.filter((q) => q.id).map(field),
    '  <label><input type="checkbox" name="consent" value="true" required> I agree to be contacted</label>',
    '  <button>Send</button>',
    '</form>',
    '<!-- Your back end then sends, with the key from its own configuration:',
    `  POST ${leadsUrl}`,
    '  Authorization: Bearer $LEADINTAKE_API_KEY',
    '  {"name": …, "phone": …, "email": …, "consent": true,',
    '   "formResponses": {"q_…": "the answer", …}}  (each question field by its id) -->',
  ].join('\n');
}
