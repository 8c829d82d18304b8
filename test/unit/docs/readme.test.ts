// README.md: every path it names is one inside the repository (a clone has nothing beside it), and
// its recorded demo transcript says which date and commit its figures came from. No root.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

test('README names no path outside the repository, and its relative links exist', () => {
  assert.doesNotMatch(README, /(^|[\s`(])\.\.\//m, 'a ../ path leaves the repository');
  for (const m of README.matchAll(/\]\(([^)#\s]+)\)/g)) {
    const target = m[1] as string;
    if (/^[a-z]+:/.test(target)) continue;
    assert.ok(existsSync(join(ROOT, target)), `README links ${target}, which is not in the repository`);
  }
});

test('the recorded demo transcript names its date and the commit whose build it ran', () => {
  const m = /recorded on (\d{4}-\d{2}-\d{2})\s+from\s+the\s+build\s+of\s+commit\s+`([0-9a-f]{7,40})`[^]*?```text\n\$ npm run demo\n/.exec(README);
  assert.ok(m, 'a "recorded on <date> from the build of commit `<sha>`" line before the transcript');
  let known = true;
  try {
    execFileSync('git', ['-C', ROOT, 'cat-file', '-e', `${m[2] as string}^{commit}`], { stdio: 'ignore' });
  } catch {
    // a shallow clone (CI) may lack it: the marker's shape is what this test holds
    known = execFileSync('git', ['-C', ROOT, 'rev-parse', '--is-shallow-repository'], { encoding: 'utf8' }).trim() === 'true';
  }
  assert.ok(known, `commit ${m[2] as string} is not in this repository's history`);
});
