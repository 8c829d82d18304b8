// The namespace test helpers clean up after themselves, also when a test process dies.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createTestNetns, ipJson, rootOnly, run, sweepStaleTestNetns, withTestNetns } from '../../../../testkit/netns.ts';

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
