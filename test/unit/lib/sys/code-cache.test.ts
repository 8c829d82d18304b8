// The code-cached bundle layout: body commented out and recovered byte for byte, cache names, and a
// real bundle built by formatCodeCachedBundle that runs, writes its cache once and then uses it.
import { randomBytes } from 'node:crypto';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { BODY_MARKER, cacheFileName, formatCommentedBody, parseCommentedBody, SEEN_SUFFIX } from '../../../../lib/sys/code-cache.ts';
import { formatCodeCachedBundle } from '../../../../scripts/build/code-cache.ts';

const base = mkdtempSync(join(tmpdir(), 'weft-cc-test-'));
after(() => rmSync(base, { recursive: true, force: true }));

describe('commented body', () => {
  test('round trip keeps every byte, including empty lines and template-literal newlines', () => {
    const body = 'var a=`x\n\n  y`;\n\nconsole.log(a)\n//already a comment\n';
    const file = `#!/usr/bin/env node\n// weft-bundle t 1\nloader();\n${formatCommentedBody(body)}`;
    assert.equal(parseCommentedBody(file), body);
  });
  test('every body line is a // comment', () => {
    const text = formatCommentedBody('a\nb\n*/c');
    for (const line of text.split('\n').filter((l) => l !== '')) assert.ok(line.startsWith('//'), line);
    assert.ok(text.startsWith(`${BODY_MARKER}\n`));
  });
  test('refuses line terminators other than LF', () => {
    assert.throws(() => formatCommentedBody('a\rb'), /CR/);
    assert.throws(() => formatCommentedBody('a\u2028b'), /U\+2028/);
  });
  test('no marker: null', () => {
    assert.equal(parseCommentedBody('#!/usr/bin/env node\nplain();\n'), null);
  });
});

describe('cacheFileName', () => {
  const sha = 'ab'.repeat(32);
  test('names the body, node version, arch and command', () => {
    assert.equal(cacheFileName('bridge', sha, 'ADD'), `weft-cc-bridge-abababababababab-${process.version}-${process.arch}-ADD.bin`);
    assert.match(cacheFileName('bridge', sha, '../x'), /-other\.bin$/);
    assert.match(cacheFileName('bridge', sha), /-other\.bin$/);
  });
  test('refuses a bad sha', () => {
    assert.throws(() => cacheFileName('bridge', '../../etc'), /bad body sha256/);
    assert.throws(() => cacheFileName('../x', sha), /bad bundle name/);
  });
});

describe('a code-cached bundle', () => {
  test('a failed run leaves neither mark nor cache: only successful runs make the cache', async () => {
    // A body of its own per test run: as root the caches live in the machine's /run/weft, shared by every run.
    const body = `/* ${String(process.pid)} ${String(Date.now())} */if(process.env.FAIL){process.exitCode=1}else{process.stdout.write("ok")}\n`;
    const file = join(base, 'failing');
    writeFileSync(file, await formatCodeCachedBundle('failing', '#!/usr/bin/env node\n// weft-bundle failing 0.0.0\n', body), { mode: 0o755 });
    const tmp = join(base, 'tmp-failing');
    mkdirSync(tmp, { mode: 0o700 });
    const run = (fail: boolean): number | null => spawnSync(process.execPath, [file], { env: { PATH: process.env['PATH'], TMPDIR: tmp, CNI_COMMAND: 'ADD', ...(fail ? { FAIL: '1' } : {}) }, encoding: 'utf8' }).status;
    const sha = (await import('node:crypto')).createHash('sha256').update(body).digest('hex').slice(0, 16);
    const dirs = ['/run/weft', join(tmp, `weft-${process.getuid?.() ?? 0}`)];
    const mine = (suffix: string): string[] => dirs.flatMap((d) => { try { return readdirSync(d).filter((f) => f.includes(sha) && f.endsWith(`-ADD.bin${suffix}`)); } catch { return []; } });
    const cleanup = (): void => { for (const d of dirs) for (const f of (() => { try { return readdirSync(d); } catch { return []; } })()) if (f.includes(sha)) rmSync(join(d, f), { force: true }); };
    after(cleanup);
    assert.equal(run(true), 1);
    assert.equal(run(true), 1);
    assert.deepEqual([mine(SEEN_SUFFIX).length, mine('').length], [0, 0], 'two failed runs: no mark, no cache');
    assert.equal(run(false), 0);
    assert.deepEqual([mine(SEEN_SUFFIX).length, mine('').length], [1, 0], 'the first successful run marks');
    assert.equal(run(true), 1);
    assert.deepEqual([mine(SEEN_SUFFIX).length, mine('').length], [1, 0], 'a failed run after it writes no cache');
    assert.equal(run(false), 0);
    assert.deepEqual([mine(SEEN_SUFFIX).length, mine('').length], [0, 1], 'the second successful run writes it');
  });

  test('a run that marked itself short (markShortRun, a no-op DEL) leaves neither mark nor cache', async () => {
    // The body sets the hint the way lib/sys/code-cache-hint.ts does (its own copy of the module, as a bundle's body has).
    const body = `/* ${String(process.pid)} ${String(Date.now())} */if(process.env.SHORT){globalThis[Symbol.for("weft.codeCache.shortRun")]=true}process.stdout.write("ok")\n`;
    const file = join(base, 'shortrun');
    writeFileSync(file, await formatCodeCachedBundle('shortrun', '#!/usr/bin/env node\n// weft-bundle shortrun 0.0.0\n', body), { mode: 0o755 });
    const tmp = join(base, 'tmp-shortrun');
    mkdirSync(tmp, { mode: 0o700 });
    const run = (short: boolean): number | null => spawnSync(process.execPath, [file], { env: { PATH: process.env['PATH'], TMPDIR: tmp, CNI_COMMAND: 'DEL', ...(short ? { SHORT: '1' } : {}) }, encoding: 'utf8' }).status;
    const sha = (await import('node:crypto')).createHash('sha256').update(body).digest('hex').slice(0, 16);
    const dirs = ['/run/weft', join(tmp, `weft-${process.getuid?.() ?? 0}`)];
    const mine = (suffix: string): string[] => dirs.flatMap((d) => { try { return readdirSync(d).filter((f) => f.includes(sha) && f.endsWith(`-DEL.bin${suffix}`)); } catch { return []; } });
    const cleanup = (): void => { for (const d of dirs) for (const f of (() => { try { return readdirSync(d); } catch { return []; } })()) if (f.includes(sha)) rmSync(join(d, f), { force: true }); };
    after(cleanup);
    assert.equal(run(true), 0);
    assert.equal(run(true), 0);
    assert.deepEqual([mine(SEEN_SUFFIX).length, mine('').length], [0, 0], 'two short runs: no mark, no cache');
    assert.equal(run(false), 0);
    assert.equal(run(true), 0);
    assert.deepEqual([mine(SEEN_SUFFIX).length, mine('').length], [1, 0], 'a short run after the first full one writes no cache');
    assert.equal(run(false), 0);
    assert.deepEqual([mine(SEEN_SUFFIX).length, mine('').length], [0, 1], 'the second full run writes it');
  });

  test('runs as a CommonJS main module, marks its first run, writes its cache on the second and reuses it', async () => {
    // A name of its own per run: as root the caches live in the machine's /run/weft, where a failed earlier run may have left some.
    const name = `tiny${randomBytes(3).toString('hex')}`;
    const body = 'const p=require("node:path");module.exports.x=1;process.stdout.write(JSON.stringify({base:p.basename(__filename),main:typeof module.exports,cmd:process.env.CNI_COMMAND}))\n';
    const file = join(base, name);
    writeFileSync(file, await formatCodeCachedBundle(name, `#!/usr/bin/env node\n// weft-bundle ${name} 0.0.0\n`, body), { mode: 0o755 });
    const tmp = join(base, 'tmp');
    const run = (): string => {
      const r = spawnSync(process.execPath, [file], { env: { PATH: process.env['PATH'], TMPDIR: tmp, CNI_COMMAND: 'ADD' }, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      return r.stdout;
    };
    mkdirSync(tmp, { mode: 0o700 });
    assert.deepEqual(JSON.parse(run()), { base: name, main: 'object', cmd: 'ADD' });
    // Root writes to /run/weft, others to $TMPDIR/weft-<uid>: look in both.
    const dirs = ['/run/weft', join(tmp, `weft-${process.getuid?.() ?? 0}`)];
    const find = (): string[] => dirs.flatMap((d) => { try { return readdirSync(d).filter((f) => f.startsWith('weft-cc-') && f.endsWith('-ADD.bin')).map((f) => join(d, f)); } catch { return []; } });
    const sha = (await import('node:crypto')).createHash('sha256').update(body).digest('hex').slice(0, 16);
    const marks = (): string[] => dirs.flatMap((d) => { try { return readdirSync(d).filter((f) => f.includes(sha) && f.endsWith(`-ADD.bin${SEEN_SUFFIX}`)); } catch { return []; } });
    assert.equal(find().filter((f) => f.includes(sha)).length, 0, 'no cache from the first run');
    assert.equal(marks().length, 1, 'the first run leaves its mark');
    assert.deepEqual(JSON.parse(run()), { base: name, main: 'object', cmd: 'ADD' });
    assert.equal(marks().length, 0, 'the second run removes the mark');
    const mine = find().filter((f) => f.includes(sha));
    assert.equal(mine.length, 1, 'one cache file for this body');
    const first = mine[0] ?? '';
    const st = statSync(first);
    assert.equal(st.mode & 0o077, 0, 'private cache file');
    const mtime = st.mtimeMs;
    assert.deepEqual(JSON.parse(run()), { base: name, main: 'object', cmd: 'ADD' });
    assert.equal(statSync(first).mtimeMs, mtime, 'an accepted cache is not rewritten');
    // A rebuilt bundle of the same name removes the old build's caches (older than an hour) when it writes its own.
    const old = new Date(Date.now() - 2 * 3600 * 1000);
    utimesSync(first, old, old);
    writeFileSync(file, await formatCodeCachedBundle(name, `#!/usr/bin/env node\n// weft-bundle ${name} 0.0.1\n`, body.replace('x=1', 'x=2')), { mode: 0o755 });
    // A cache of yet another build written recently (both in use during an upgrade) is kept.
    const recent = join(dirname(first), `weft-cc-${name}-${'c'.repeat(16)}-${process.version}-${process.arch}-ADD.bin`);
    writeFileSync(recent, 'x', { mode: 0o400 });
    run(); // the new build's first run: a mark, and the old build's caches are cleaned
    run(); // its second: its cache
    const after = find().filter((f) => f.includes(`weft-cc-${name}-`));
    assert.equal(after.length, 2, after.join(', '));
    assert.ok(!after.includes(first), 'the old cache is gone');
    assert.ok(after.includes(recent), 'the recent one of another build stays');
    for (const f of after) rmSync(f);
  });
});
