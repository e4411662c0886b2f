import type { FieldMapping } from './field-mapping.ts';
import { parsePath } from './json-path.ts';
import { SIGNATURE_HEADER } from './webhook-auth.ts';

// What the Form page shows beside a generic webhook's URL (F5): a payload its mapping reads, and
// a curl command that sends it with the bearer secret. With no mapping, the flat payload the
// defaults read.

export interface WebhookSample {
  body: Record<string, unknown>;
  /** A ready-to-paste command; `<secret>` stands for the source's secret, never filled in. */
  curl: string;
  /** How to sign instead of sending the secret. */
  signatureHeader: string;
}

const EXAMPLE = {
  name: 'Ada Lovelace',
  phone: '+44 20 7946 0958',
  email: 'ada@example.com',
  goal: 'A quote for a kitchen',
  sourceLeadId: 'sub_12345',
};

export function webhookSample(url: string, mapping: FieldMapping): WebhookSample {
  const body: Record<string, unknown> = {};
  const put = (path: string | undefined, fallback: string, value: string) => setAt(body, path ?? fallback, value);
  if (Array.isArray(mapping.name)) {
    const parts = EXAMPLE.name.split(' ');
    mapping.name.forEach((p, i) =>
      setAt(body, p, i === mapping.name!.length - 1 ? parts.slice(i).join(' ') : (parts[i] ?? '')),
    );
  } else put(mapping.name, 'name', EXAMPLE.name);
  put(mapping.phone, 'phone', EXAMPLE.phone);
  put(mapping.email, 'email', EXAMPLE.email);
  put(mapping.goal, 'goal', EXAMPLE.goal);
  put(mapping.sourceLeadId, 'id', EXAMPLE.sourceLeadId);
  for (const [key, p] of Object.entries(mapping.metadata ?? { budget: 'budget' })) setAt(body, p, `(${key})`);
  const json = JSON.stringify(body);
  return {
    body,
    curl:
      `curl -X POST '${url}' -H 'Content-Type: application/json' -H 'Authorization: Bearer <secret>' ` +
      `-d '${json.replaceAll("'", "'\\''")}'`,
    signatureHeader: `${SIGNATURE_HEADER}: sha256=<hex HMAC-SHA256 of the exact body, keyed with the secret>`,
  };
}

/** Writes `value` at `path`, making the objects, arrays and matching list items on the way. */
function setAt(root: Record<string, unknown>, path: string, value: unknown): void {
  const steps = parsePath(path);
  if (!steps) return;
  let here: unknown = root;
  steps.forEach((step, i) => {
    const last = i === steps.length - 1;
    const next = steps[i + 1];
    const fresh = (): unknown => (last ? value : next && 'key' in next ? {} : []);
    if ('key' in step && isObject(here)) {
      if (last || !(step.key in here)) here[step.key] = fresh();
      here = here[step.key];
    } else if ('index' in step && Array.isArray(here)) {
      while (here.length < step.index) here.push(null);
      if (last || here[step.index] === undefined || here[step.index] === null) here[step.index] = fresh();
      here = here[step.index];
    } else if ('where' in step && Array.isArray(here)) {
      let item = here.find((x) => isObject(x) && String(x[step.where]) === step.equals);
      if (!item) here.push((item = { [step.where]: step.equals }));
      here = item;
    }
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
