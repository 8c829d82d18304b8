// A private copy of dist/bin for the length of one test process. Other engineers (and CI steps) rebuild
// dist/ while tests run; esbuild rewrites bundles and dist/package.json in place, so a plugin started at
// that moment fails inside Node before our code runs (no CNI JSON at all). Copying once at start makes
// the reliability figures about weft, not about a concurrent build.
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DIST_BIN = join(import.meta.dirname, '..', '..', 'dist', 'bin');
let copy: string | undefined;

/** The copied bin dir (made on first call, removed at process exit); bundles keep their CommonJS marker. */
export function privateBinDir(): string {
  if (copy !== undefined) return copy;
  if (!existsSync(join(DIST_BIN, 'bridge'))) throw new Error('dist/bin is not built: run npm run build first');
  const dir = mkdtempSync(join(tmpdir(), 'weft-bin-'));
  for (const f of readdirSync(DIST_BIN)) copyFileSync(join(DIST_BIN, f), join(dir, f));
  // dist/package.json says "type": "commonjs" for the bundles; the copy needs the same marker beside it.
  writeFileSync(join(dir, 'package.json'), '{ "type": "commonjs" }\n');
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  copy = dir;
  return dir;
}
