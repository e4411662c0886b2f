import assert from 'node:assert/strict';
import fs from 'node:fs';

/**
 * Compares `actual` with test/snapshots/<name> exactly. A snapshot is written only on request
 * (UPDATE_SNAPSHOTS=1), so a change always shows up as a diff to review, never as a silent pass.
 */
export function assertMatchesSnapshot(name: string, actual: string): void {
  const file = new URL(`../snapshots/${name}`, import.meta.url);
  if (process.env.UPDATE_SNAPSHOTS === '1') {
    fs.writeFileSync(file, actual.endsWith('\n') ? actual : `${actual}\n`);
    return;
  }
  assert.ok(fs.existsSync(file), `snapshot ${name} is missing: run with UPDATE_SNAPSHOTS=1 and review the file`);
  // The file ends with a newline (editors add one); the prompt itself does not.
  assert.equal(`${actual}\n`, fs.readFileSync(file, 'utf8'), `prompt differs from test/snapshots/${name}`);
}
