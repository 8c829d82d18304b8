// Our bridge next to the reference: same config at 0.3.1, 0.4.0, 1.0.0 gives the same result structure,
// pod addresses and routes; 1.1.0 works too (ours only: the reference 1.1.1 does not speak it).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { rootOnly } from '../../../testkit/netns.ts';
import { addrsOf, bridgeConf, makeNodes, ours, reference, runIn, tempDir, type Impl } from './harness.ts';

type Res = { cniVersion: string; interfaces: Array<Record<string, unknown>>; ips: Array<Record<string, unknown>>; routes: unknown[]; dns: unknown };

/** The shape of a result with the values that differ by nature (names, MACs, netns paths) blanked. */
function shape(r: Res): unknown {
  return {
    cniVersion: r.cniVersion,
    interfaces: r.interfaces.map((i) => Object.keys(i).sort()),
    ips: r.ips.map((ip) => ({ ...ip })),
    routes: r.routes,
    dns: r.dns,
  };
}

async function addOnce(impl: Impl, version: string): Promise<{ res: Res; podRoutes: string }> {
  const { node, pods } = await makeNodes(1);
  const pod = pods[0];
  assert.ok(pod);
  const dir = tempDir('compat');
  try {
    const conf = bridgeConf({ cniVersion: version, dataDir: dir, extra: { isDefaultGateway: false } });
    const r = await runIn(node, impl, { command: 'ADD', containerId: `c-${version}`, netns: pod.path }, conf);
    assert.equal(r.code, 0, `${impl.label} ${version}: ${r.stdout}${r.stderr}`);
    const routes = await pod.exec(['ip', 'route', 'show']);
    const del = await runIn(node, impl, { command: 'DEL', containerId: `c-${version}`, netns: pod.path }, conf);
    assert.equal(del.code, 0, del.stdout);
    return { res: r.json as unknown as Res, podRoutes: routes.stdout.trim() };
  } finally {
    await node.destroy();
    await pod.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('bridge results match the reference per version', rootOnly(), () => {
  for (const version of ['0.3.1', '0.4.0', '1.0.0']) {
    test(`cniVersion ${version}`, async () => {
      const a = await addOnce(ours(), version);
      const b = await addOnce(reference, version);
      assert.deepEqual(shape(a.res), shape(b.res));
      assert.equal(a.res.interfaces.length, 3);
      assert.equal(a.res.interfaces[2]?.['name'], 'eth0');
      assert.equal(a.podRoutes, b.podRoutes, 'pod routing tables are identical');
    });
  }

  test('cniVersion 1.1.0 works (ours)', async () => {
    const { node, pods } = await makeNodes(1);
    const pod = pods[0];
    assert.ok(pod);
    const dir = tempDir('v11');
    try {
      const conf = bridgeConf({ cniVersion: '1.1.0', dataDir: dir });
      const r = await runIn(node, ours(), { command: 'ADD', containerId: 'c11', netns: pod.path }, conf);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      const res = r.json as unknown as Res;
      assert.equal(res.cniVersion, '1.1.0');
      assert.deepEqual(res.ips, [{ address: '10.88.0.2/24', gateway: '10.88.0.1', interface: 2 }]);
      assert.deepEqual(await addrsOf(pod, 'eth0'), ['10.88.0.2/24']);
    } finally {
      await node.destroy();
      await pod.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
