// The field paths of a generic webhook's mapping (docs/INTAKE.md, "Generic webhooks"): what a
// person can type on the dashboard to point at a value in a tool's JSON, not a query language.
//   contact.phone            a key of an object, then another
//   $.contact.phone          the same ($ is the root; optional)
//   answers[0].text          an array's element by position
//   data.fields[label=Phone].value
//                            the first element of an array whose `label` is "Phone" (Tally,
//                            Typeform and form plugins send their answers as such lists)

export type PathStep = { key: string } | { index: number } | { where: string; equals: string };

const STEP = /\.([^.[\]]+)|\[(\d+)\]|\[([^=\]]+)=([^\]]*)\]/y;

/** The steps of `path`, or null when it is not a path of the form above. */
export function parsePath(path: string): PathStep[] | null {
  let text = path.trim();
  if (text === '' || text.length > 300) return null;
  if (text.startsWith('$')) text = text.slice(1);
  if (!text.startsWith('.') && !text.startsWith('[')) text = `.${text}`;
  const steps: PathStep[] = [];
  STEP.lastIndex = 0;
  while (STEP.lastIndex < text.length) {
    const at = STEP.lastIndex;
    const m = STEP.exec(text);
    if (!m || m.index !== at) return null;
    if (m[1] !== undefined) steps.push({ key: m[1] });
    else if (m[2] !== undefined) steps.push({ index: Number(m[2]) });
    else steps.push({ where: m[3]!.trim(), equals: m[4]!.trim() });
  }
  return steps.length > 0 && steps.length <= 20 ? steps : null;
}

/** The value at `path` in `root`, or undefined when the path leads nowhere (or is not a path). */
export function valueAt(root: unknown, path: string): unknown {
  const steps = parsePath(path);
  if (!steps) return undefined;
  let here: unknown = root;
  for (const step of steps) {
    if (here === null || typeof here !== 'object') return undefined;
    if ('key' in step) {
      if (Array.isArray(here) || !Object.hasOwn(here, step.key)) return undefined;
      here = (here as Record<string, unknown>)[step.key];
    } else if ('index' in step) {
      here = Array.isArray(here) ? here[step.index] : undefined;
    } else {
      if (!Array.isArray(here)) return undefined;
      here = here.find(
        (item) =>
          item !== null &&
          typeof item === 'object' &&
          String((item as Record<string, unknown>)[step.where] ?? '') === step.equals,
      );
    }
  }
  return here;
}

/** A mapped value as text: strings trimmed, numbers and booleans written out, anything else absent. */
export function textAt(root: unknown, path: string): string | undefined {
  const v = valueAt(root, path);
  if (typeof v === 'string') return v.trim() === '' ? undefined : v.trim();
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  // A multiple-choice answer: its options, joined.
  if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')) return v.join(', ');
  return undefined;
}
