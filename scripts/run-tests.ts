// Runs the tests of one folder under test/ with node --test: `npm run test:unit` is
// `node --import tsx scripts/run-tests.ts unit`. The files are listed here because node --test
// expands glob patterns only from Node 21, and weft supports Node 20.
// Usage: node --import tsx scripts/run-tests.ts <folder> [node --test flags...]
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Every *.test.ts under `dir`, sorted, relative to the repository root. */
export function listTestFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...listTestFiles(p));
    else if (e.name.endsWith('.test.ts')) out.push(relative(root, p));
  }
  return out.sort();
}

function main(): number {
  const [folder, ...flags] = process.argv.slice(2);
  if (folder === undefined || folder.includes('..')) {
    process.stderr.write('usage: run-tests.ts <folder under test/> [node --test flags...]\n');
    return 2;
  }
  const files = listTestFiles(join(root, 'test', folder));
  if (files.length === 0) {
    process.stderr.write(`no tests in test/${folder}\n`);
    return 0;
  }
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...flags, ...files], { cwd: root, stdio: 'inherit' });
  return r.status ?? 1;
}

process.exitCode = main();
