// End-to-end: the built dist/bin/loopback run as a runtime runs it, against namespaces this test makes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execPlugin } from '../../../testkit/cni-runner.ts';
import { createTestNetns } from '../../../testkit/netns.ts';
import { DIST } from '../../../scripts/bench/util.ts';

const isRoot = process.getuid?.() === 0;
const bin = join(DIST, 'loopback');
const ALL_VERSIONS = ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'];

function conf(v = '1.0.0'): string {
  return JSON.stringify({ cniVersion: v, name: 'lo-test', type: 'loopback' });
}

function loUp(ns: string): boolean {
  const links = JSON.parse(execFileSync('ip', ['-n', ns, '-j', 'link', 'show', 'lo'], { encoding: 'utf8' })) as Array<{ flags: string[] }>;
  return links[0]?.flags.includes('UP') ?? false;
}

test('a lone copy of dist/bin/loopback answers VERSION with 0.1.0 through 1.1.0', async () => {
  assert.ok(existsSync(bin), 'dist/bin/loopback must be built (npm run build)');
  const dir = mkdtempSync(join(tmpdir(), 'weft-lone-'));
  try {
    const lone = join(dir, 'loopback');
    copyFileSync(bin, lone);
    execFileSync('chmod', ['0755', lone]);
    // An empty environment apart from PATH: no node_modules, no package.json, no TMPDIR hints.
    const r = await execPlugin(lone, { CNI_COMMAND: 'VERSION' }, '', { binDirs: [dir] });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.json?.['supportedVersions'], ALL_VERSIONS);
    // stdout is exactly one JSON document: the version result, nothing before or after it.
    assert.deepEqual(Object.keys(JSON.parse(r.stdout) as object).sort(), ['cniVersion', 'supportedVersions']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('run by hand without CNI_COMMAND it prints an about text on stderr and exits 0', async () => {
  const r = await execPlugin(bin, {}, '', { binDirs: [DIST] });
  assert.equal(r.code, 0);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /loopback/);
  assert.match(r.stderr, /1\.1\.0/);
});

test('loopback ADD, CHECK, DEL, DEL again, DEL after the namespace is gone', { skip: isRoot ? false : 'NEEDS ROOT: namespace test skipped' }, async (t) => {
  const kit = await createTestNetns();
  const ns = kit.name;
  t.after(() => kit.destroy());
  const env = (cmd: string): NodeJS.ProcessEnv => ({ CNI_COMMAND: cmd, CNI_CONTAINERID: 'c1', CNI_NETNS: `/var/run/netns/${ns}`, CNI_IFNAME: 'lo', CNI_PATH: DIST });
  const opts = { binDirs: [DIST] };
  assert.equal(loUp(ns), false, 'a new namespace has lo down');

  const add = await execPlugin(bin, env('ADD'), conf(), opts);
  assert.equal(add.code, 0, add.stdout + add.stderr);
  assert.equal(loUp(ns), true, 'ADD brings lo up');
  const res = add.json as { cniVersion: string; interfaces: Array<{ name: string; sandbox?: string }>; ips: Array<{ address: string; interface: number }> };
  assert.equal(res.cniVersion, '1.0.0');
  assert.deepEqual(res.interfaces.map((i) => [i.name, i.sandbox]), [['lo', `/var/run/netns/${ns}`]]);
  const addrs = res.ips.map((i) => i.address);
  assert.ok(addrs.includes('127.0.0.1/8'), JSON.stringify(addrs));
  assert.ok(addrs.includes('::1/128'), JSON.stringify(addrs));
  assert.equal(add.stdout.trim().startsWith('{') && add.stdout.trim().endsWith('}'), true);

  const chk = await execPlugin(bin, env('CHECK'), JSON.stringify({ ...JSON.parse(conf()), prevResult: res }), opts);
  assert.equal(chk.code, 0, chk.stdout + chk.stderr);
  assert.equal(chk.stdout.trim(), '');

  const del = await execPlugin(bin, env('DEL'), conf(), opts);
  assert.equal(del.code, 0, del.stdout + del.stderr);
  assert.equal(loUp(ns), false, 'DEL brings lo down');

  const chkDown = await execPlugin(bin, env('CHECK'), conf(), opts);
  assert.equal(chkDown.code, 1, 'CHECK fails while lo is down');
  assert.equal(typeof chkDown.json?.['code'], 'number');

  const del2 = await execPlugin(bin, env('DEL'), conf(), opts);
  assert.equal(del2.code, 0, del2.stdout + del2.stderr);

  await kit.destroy();
  const del3 = await execPlugin(bin, env('DEL'), conf(), opts);
  assert.equal(del3.code, 0, `DEL after the namespace is gone: ${del3.stdout}${del3.stderr}`);
  const delEmpty = await execPlugin(bin, { ...env('DEL'), CNI_NETNS: '' }, conf(), opts);
  assert.equal(delEmpty.code, 0, delEmpty.stdout + delEmpty.stderr);
});

test('loopback ADD result is formatted per requested version', { skip: isRoot ? false : 'NEEDS ROOT: namespace test skipped' }, async (t) => {
  const kit = await createTestNetns();
  const ns = kit.name;
  t.after(() => kit.destroy());
  const env = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c1', CNI_NETNS: `/var/run/netns/${ns}`, CNI_IFNAME: 'lo', CNI_PATH: DIST };
  const r020 = await execPlugin(bin, env, conf('0.2.0'), { binDirs: [DIST] });
  assert.equal(r020.code, 0, r020.stdout + r020.stderr);
  assert.deepEqual((r020.json?.['ip4'] as { ip?: string } | undefined)?.ip, '127.0.0.1/8');
  const r031 = await execPlugin(bin, env, conf('0.3.1'), { binDirs: [DIST] });
  const ips031 = r031.json?.['ips'] as Array<{ version?: string; address: string }>;
  assert.deepEqual(ips031.find((i) => i.address === '127.0.0.1/8')?.version, '4');
  const r110 = await execPlugin(bin, env, conf('1.1.0'), { binDirs: [DIST] });
  assert.equal(r110.json?.['cniVersion'], '1.1.0');
});

