// Upgrade in place, bridge + host-local + portmap (issue 20): pods added by the previous release are
// CHECKed, DELeted and garbage-collected by this build, and pods added by this build are CHECKed and
// DELeted by the previous release, with nothing left on the node (IPAM files, host veths, nft
// elements, pod addresses). The previous release is built once and cached (previous-build.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestNetns, rootOnly, type TestNetns } from '../../../testkit/netns.ts';
import type { Attachment, ConfList } from '../../../testkit/cni-runner.ts';
import { builds, gcAll, handOver, leftovers, ping, podAddrs, runnerOf } from './helpers.ts';

const NET = 'upgnet';

function conflist(dir: string): ConfList {
  return {
    cniVersion: '1.1.0', name: NET,
    plugins: [
      { type: 'bridge', bridge: 'upgbr0', isGateway: true, ipMasq: true, ipam: { type: 'host-local', ranges: [[{ subnet: '10.64.0.0/24' }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: dir } },
      { type: 'portmap', snat: true, capabilities: { portMappings: true } },
    ],
  };
}

describe('upgrade in place: bridge + host-local + portmap', rootOnly(), () => {
  let node: TestNetns;
  let pods: TestNetns[] = [];
  let dir = '';
  let bins: { prev: string; next: string };
  const att = (i: number): Attachment => ({
    containerId: `upg-${process.pid}-${i}`, netns: pods[i]?.path ?? '', ifName: 'eth0',
    runtimeConfig: { portMappings: [{ hostPort: 32000 + i, containerPort: 80, protocol: 'tcp' }] },
  });

  before(async () => {
    bins = builds();
    node = await createTestNetns('weft-t-upg');
    await node.exec(['ip', 'link', 'set', 'lo', 'up']);
    for (let i = 0; i < 3; i++) pods.push(await createTestNetns('weft-t-upgp'));
    dir = mkdtempSync(join(tmpdir(), 'weft-upg-'));
  });
  after(async () => {
    for (const p of pods) await p.destroy();
    await node.destroy();
    rmSync(dir, { recursive: true, force: true });
    pods = [];
  });

  const gc = (binDir: string, valid: Attachment[]): Promise<void> => gcAll(conflist(dir), binDir, node.name, valid);

  test('pods of the previous release are checked, deleted and collected by this build', async () => {
    const oldR = runnerOf(conflist(dir), bins.prev, node.name);
    const newR = runnerOf(conflist(dir), bins.next, node.name);
    await oldR.add(att(0));
    await oldR.add(att(1));
    const ip0 = (await podAddrs(pods[0]?.name ?? ''))[0]?.split('/')[0] ?? '';
    assert.ok(await ping(node.name, ip0), 'the old pod answers before the upgrade');
    for (const i of [0, 1]) handOver(oldR, newR, att(i));
    await newR.check(att(0));
    await newR.check(att(1));
    await gc(bins.next, [att(0), att(1)]);
    assert.ok(await ping(node.name, ip0), 'GC with both listed keeps the old pod working');
    await newR.del(att(0));
    // The runtime lost pod 1 (no DEL): GC by the new build must free it.
    await gc(bins.next, []);
    assert.deepEqual(await leftovers(node, NET, dir, [pods[0]?.name ?? '', pods[1]?.name ?? '']), []);
  });

  test('pods of this build are checked and deleted by the previous release', async () => {
    const oldR = runnerOf(conflist(dir), bins.prev, node.name);
    const newR = runnerOf(conflist(dir), bins.next, node.name);
    await newR.add(att(2));
    await newR.add(att(1));
    const ip2 = (await podAddrs(pods[2]?.name ?? ''))[0]?.split('/')[0] ?? '';
    assert.ok(await ping(node.name, ip2), 'the new pod answers');
    for (const i of [1, 2]) handOver(newR, oldR, att(i));
    await oldR.check(att(2));
    await oldR.del(att(2));
    await gc(bins.prev, []);
    assert.deepEqual(await leftovers(node, NET, dir, pods.map((p) => p.name)), []);
  });
});
