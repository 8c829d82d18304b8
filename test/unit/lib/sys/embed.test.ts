// Bundles a tiny entry with embedAddonPlugin and runs it: the addon must come out of the bundle
// (unpacked into a private TMPDIR dir), not from lib/sys/build. Needs the addon built (npm run build).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildAddon, embedAddonPlugin } from '../../../../scripts/build/addon.ts';

const work = mkdtempSync(join(tmpdir(), 'weft-embed-test-'));
after(() => rmSync(work, { recursive: true, force: true }));

test('a bundle loads its embedded addon from a content-addressed private copy', async () => {
  const nodePath = await buildAddon();
  const index = fileURLToPath(new URL('../../../../lib/sys/index.ts', import.meta.url));
  const entry = join(work, 'entry.ts');
  writeFileSync(
    entry,
    `import { sys } from ${JSON.stringify(index)};\n` +
      `const s = sys();\n` +
      `let code = '';\ntry { s.setns(-1); } catch (e) { code = (e as { code: string }).code; }\n` +
      `process.stdout.write(JSON.stringify({ keys: Object.keys(s), code }));\n`,
  );
  const outfile = join(work, 'bundle.cjs');
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    logLevel: 'silent',
    plugins: [embedAddonPlugin(nodePath)],
  });
  const tmp = join(work, 'tmp');
  chmodSync(work, 0o755);
  // As root, run the bundle as nobody: /run/weft is then not writable and the loader must fall
  // back to $TMPDIR/weft-<uid> (and this test leaves the machine's /run/weft alone).
  const asRoot = process.getuid?.() === 0;
  const uid = asRoot ? 65534 : (process.getuid?.() ?? 0);
  mkdirSync(tmp, { mode: 0o755 });
  if (asRoot) chownSync(tmp, uid, uid);
  const cmd = asRoot
    ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, outfile]
    : [process.execPath, outfile];
  const res = spawnSync(cmd[0] ?? '', cmd.slice(1), { env: { ...process.env, TMPDIR: tmp }, encoding: 'utf8' });
  assert.equal(res.status, 0, res.stderr);
  const out = JSON.parse(res.stdout) as { keys: string[]; code: string };
  assert.deepEqual(out.keys.sort(), ['flock', 'nlAddMembership', 'nlOpen', 'nlRecv', 'nlSend', 'nsType', 'pollStart', 'pollStop', 'setNonBlocking', 'setTxQueueLen', 'setns', 'tunOpen', 'tunReadBatch', 'tunSetOffload', 'tunWriteBatch', 'udpOpen', 'udpRecvBatch', 'udpSendBatch']);
  assert.equal(out.code, 'EBADF');
  const dir = join(tmp, `weft-${uid}`);
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  const files = readdirSync(dir);
  assert.equal(files.length, 1);
  assert.match(files[0] ?? '', /^weft_sys-[0-9a-f]{16}\.node$/);
  assert.equal(statSync(join(dir, files[0] ?? '')).size, statSync(nodePath).size);
  // Second run reuses the file (same inode).
  const ino = statSync(join(dir, files[0] ?? '')).ino;
  const again = spawnSync(cmd[0] ?? '', cmd.slice(1), { env: { ...process.env, TMPDIR: tmp }, encoding: 'utf8' });
  assert.equal(again.status, 0, again.stderr);
  assert.equal(statSync(join(dir, files[0] ?? '')).ino, ino);
});
