// The namespace test helpers clean up after themselves, also when a test process dies.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  createTestNetns, createTestNetnsSync, inNetns, inPrivateMounts, ipJson, netnsFixture, rootOnly, run, spawnInNetns, sweepStaleTestNetns, type TestNetns, withTestNetns,
} from '../../../../testkit/netns.ts';

async function netnsExists(name: string): Promise<boolean> {
  const res = await run(['ip', 'netns', 'list']);
  return res.stdout.split('\n').some((l) => l.split(' ')[0] === name);
}

test('createTestNetns names, exec and destroy', rootOnly(), async () => {
  const ns = await createTestNetns('weft-t-helper');
  assert.match(ns.name, new RegExp(`^weft-t-helper-${process.pid}-[0-9a-f]{6}$`));
  assert.equal(ns.path, `/run/netns/${ns.name}`);
  assert.ok(await netnsExists(ns.name));
  const r = await ns.exec(['ip', '-j', 'link', 'show']);
  assert.equal(r.code, 0);
  assert.deepEqual((JSON.parse(r.stdout) as { ifname: string }[]).map((l) => l.ifname), ['lo']);
  assert.deepEqual((await ipJson<{ ifname: string }[]>(ns, ['link'])).map((l) => l.ifname), ['lo']);
  const failing = await ns.exec(['false']);
  assert.equal(failing.code, 1);
  await ns.destroy();
  await ns.destroy(); // idempotent
  assert.equal(await netnsExists(ns.name), false);
});

test('withTestNetns deletes the namespace when fn throws', rootOnly(), async () => {
  let name = '';
  await assert.rejects(
    withTestNetns((ns) => {
      name = ns.name;
      throw new Error('fail inside');
    }),
    /fail inside/,
  );
  assert.notEqual(name, '');
  assert.equal(await netnsExists(name), false);
});

test('a killed test process cleans up; a crashed one is swept by the next run', rootOnly(), async () => {
  const helper = fileURLToPath(new URL('../../../../testkit/netns.ts', import.meta.url));
  const child = async (ending: string): Promise<string> => {
    const script =
      `const { createTestNetns } = await import(${JSON.stringify(helper)});` +
      `const ns = await createTestNetns('weft-t-crash'); process.stdout.write(ns.name);` +
      `setTimeout(() => { ${ending}; }, 10);`;
    const res = await run([process.execPath, '--import', 'tsx', '--input-type=module', '-e', script]);
    assert.notEqual(res.code, 0);
    assert.match(res.stdout, /^weft-t-crash-\d+-[0-9a-f]{6}$/);
    return res.stdout;
  };
  const killed = await child('process.kill(process.pid, "SIGTERM")');
  assert.equal(await netnsExists(killed), false, `${killed} leaked after SIGTERM`);
  const crashed = await child('throw new Error("crash")');
  try {
    assert.ok((await sweepStaleTestNetns()).includes(crashed));
    assert.equal(await netnsExists(crashed), false);
  } finally {
    await run(['ip', 'netns', 'delete', crashed]);
  }
});

test('createTestNetnsSync: destroySync kills what still runs inside, then deletes the namespace', rootOnly(), async () => {
  const ns = createTestNetnsSync('weft-t-sync');
  assert.ok(await netnsExists(ns.name));
  const child = spawnInNetns(ns.name, ['sleep', '60'], { stdio: 'ignore' });
  const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_c, sig) => r(sig)));
  for (let i = 0; i < 100 && (await run(['ip', 'netns', 'pids', ns.name])).stdout.trim() === ''; i++) await new Promise((r) => setTimeout(r, 20));
  ns.destroySync();
  assert.equal(await exited, 'SIGKILL');
  assert.equal(await netnsExists(ns.name), false);
  ns.destroySync(); // idempotent
});

test('inNetns runs a command inside the namespace, not in ours', rootOnly(), async () => {
  await withTestNetns(async (ns) => {
    const inside = await run(inNetns(ns.name, ['readlink', '/proc/self/ns/net']));
    const ours = await run(['readlink', '/proc/self/ns/net']);
    assert.equal(inside.code, 0, inside.stderr);
    assert.notEqual(inside.stdout, ours.stdout);
  });
});

test('inPrivateMounts: the bind mount is seen by the command only', rootOnly(), async () => {
  const dir = mkdtempSync(join(tmpdir(), 'weft-t-mnt-'));
  try {
    const over = join(dir, 'over');
    const file = join(dir, 'file');
    writeFileSync(over, 'original\n');
    writeFileSync(file, 'replaced\n');
    const r = await run(inPrivateMounts([[file, over]], ['cat', over]));
    assert.deepEqual([r.code, r.stdout], [0, 'replaced\n'], r.stderr);
    assert.equal(readFileSync(over, 'utf8'), 'original\n');
    const bad = await run(inPrivateMounts([[join(dir, 'missing'), over]], ['true']));
    assert.equal(bad.code, 97);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('netnsFixture', rootOnly(), () => {
  const made: TestNetns[] = [];
  describe('a suite using it', () => {
    const nets = netnsFixture('weft-t-fix');
    it('creates namespaces', async () => {
      made.push(await nets.create(), await nets.create());
      for (const ns of made) assert.ok(existsSync(ns.path));
    });
  });
  it('its after hook deleted them when the suite ended', async () => {
    assert.equal(made.length, 2);
    for (const ns of made) assert.equal(await netnsExists(ns.name), false, `${ns.name} outlived its suite`);
  });
});
