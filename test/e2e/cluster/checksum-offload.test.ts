// weftd sets TX checksum offload on flannel.1 as Backend.ChecksumOffload and the kernel say, and logs
// why: on this machine's kernel (5.7 or newer) "auto" keeps the kernel default (on); "off" forces the
// flannel#1279 workaround. Checked with `ethtool -k` inside the node namespaces.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { release } from 'node:os';
import { decideChecksumOffload } from '../../../agent/backend/checksum-offload.ts';
import { Cluster, waitFor, type ClusterNode } from '../../../testkit/cluster.ts';
import { nsRun } from '../../../testkit/topology.ts';
import { skipReason } from './helpers.ts';

async function txChecksum(n: ClusterNode): Promise<string> {
  const line = (await nsRun(n.netns, ['ethtool', '-k', 'flannel.1'])).split('\n').find((l) => l.trim().startsWith('tx-checksum-ip-generic:'));
  return line?.split(':')[1]?.trim() ?? '(missing)';
}

void describe('weftd: TX checksum offload on the VTEP', { skip: skipReason(), timeout: 120_000 }, () => {
  const made: Cluster[] = [];
  after(() => { for (const c of made) c.destroy(); });

  for (const mode of ['auto', 'off', 'on'] as const) {
    const want = decideChecksumOffload(mode).offload ? 'on' : 'off';
    void it(`ChecksumOffload ${mode} on kernel ${release()}: ${want}, logged with the reason`, async () => {
      const c = await Cluster.create({ backend: 'vxlan', store: 'file', nodes: 2, podsPerNode: 0, ...(mode === 'auto' ? {} : { backendConf: { ChecksumOffload: mode } }) });
      made.push(c);
      for (const n of c.nodes) {
        await waitFor(`tx-checksum-ip-generic ${want} on ${n.netns}`, async () => (await txChecksum(n)) === want, 5000);
        const log = c.weftdLog(n);
        assert.match(log, new RegExp(`"msg":"TX checksum offload ${want}".*"via":"ethtool netlink"`), log.slice(-1500));
        assert.match(log, mode === 'auto' ? /"reason":"kernel \d+\.\d+ is/ : /"reason":"Backend.ChecksumOffload is/);
      }
    });
  }
});
