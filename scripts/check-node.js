// The Node.js version check every entry point runs first (bin/leadintake.js, and `npm start`,
// `npm test`, `npm run build`, `npm run bench` through their pre-scripts). Plain JavaScript with
// nothing newer than what old Node versions parse, so that on the wrong Node the user reads one
// line saying what was found, what is needed and how to get it — not a parser error about
// TypeScript or a flag.
//
//   node scripts/check-node.js                 exit 1 with that line if Node is older than 22.12
//   node scripts/check-node.js --typescript    … or cannot run TypeScript files directly (< 22.18)
import fs from 'node:fs';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

/** The service itself (compiled, or its sources through the bin, which adds the flag 22.12 needs). */
export const MINIMUM = [22, 12];
/** Running .ts files with plain `node` (tests, bench): type stripping is on by default from here. */
export const MINIMUM_TYPESCRIPT = [22, 18];

/** The README's one-liner that puts Node 24 into ~/.cache/leadintake-node and on the PATH. */
export function installHint(platform = process.platform, arch = process.arch) {
  const pkg = `node-${platform === 'win32' ? 'win' : platform}-${arch}`;
  const prefix = '~/.cache/leadintake-node';
  return `npm install --prefix ${prefix} ${pkg}@24 && export PATH=${prefix}/node_modules/${pkg}/bin:$PATH`;
}

/**
 * Null when `version` (e.g. "24.11.0") is new enough; otherwise the one line to print.
 * `typescript`: the caller runs .ts files itself (no flag added).
 */
export function nodeVersionProblem(version, options) {
  const opts = options || {};
  const typescript = opts.typescript === true;
  const parts = String(version).replace(/^v/, '').split('.').map(Number);
  const major = parts[0] || 0;
  const minor = parts[1] || 0;
  const min = typescript ? MINIMUM_TYPESCRIPT : MINIMUM;
  // 23.0–23.5 (odd, past end of life) pass although they lack type stripping: not worth a rule.
  const newEnough = major > min[0] || (major === min[0] && minor >= min[1]);
  if (newEnough) return null;
  const need = `>=${min[0]}.${min[1]}${typescript ? ' (runs TypeScript directly)' : ''}`;
  const where = opts.execPath ? ` (${opts.execPath})` : '';
  return (
    `leadintake: found Node.js ${version}${where}; needs Node.js ${need}, Node 24 recommended. ` +
    `Get Node 24: ${installHint(opts.platform, opts.arch)}`
  );
}

/** Prints the line and exits 1 when this Node is too old. */
export function requireSupportedNode(options) {
  const problem = nodeVersionProblem(
    process.versions.node,
    Object.assign({ execPath: process.execPath }, options || {}),
  );
  if (problem) {
    console.error(problem);
    process.exit(1);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) {
  requireSupportedNode({ typescript: process.argv.indexOf('--typescript') > 1 });
}
