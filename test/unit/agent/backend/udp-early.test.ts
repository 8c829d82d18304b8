// agent/backend/udp-early: the early udp start declines (opening nothing, never throwing) whenever it cannot
// be sure: the knob off, a kube store, another backend, no subnet.env, a lease that is not this
// node's; the path that opens flannel0 needs root and is covered by test/e2e/cluster/udp-migration.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseNetConf } from '../../../../agent/config/net-conf.ts';
import { earlyStillFits, startUdpEarly, type EarlyUdp } from '../../../../agent/backend/udp-early.ts';
import { createAgentLog } from '../../../../agent/log.ts';
import { formatLeaseFile, leasePath } from '../../../../agent/lease/file/lease-io.ts';
import type { Rtnl } from '../../../../lib/netlink/index.ts';
import type { Uplink } from '../../../../agent/uplink.ts';

const dir = mkdtempSync(join(tmpdir(), 'weft-early-'));
const UPLINK: Uplink = { index: 2, name: 'eth0', mtu: 1500, publicIp: '192.0.2.11', cidr: '192.0.2.11/24', publicIpOnUplink: true };
/** Any use of netlink would mean the early start went further than it should have. */
const rtnl = new Proxy({}, { get: () => { throw new Error('netlink touched'); } }) as Rtnl;
const lines: string[] = [];
const log = createAgentLog('debug', (l) => lines.push(l));

function files(backend: string, env: string | null, lease: { subnet: string; ip: string } | null): { netConfPath: string; leases: string; subnetFile: string } {
  const sub = mkdtempSync(join(dir, 'n-'));
  const netConfPath = join(sub, 'net-conf.json');
  writeFileSync(netConfPath, JSON.stringify({ Network: '10.244.0.0/16', Backend: { Type: backend } }));
  const leases = join(sub, 'leases');
  mkdirSync(leases);
  if (lease) writeFileSync(leasePath(leases, lease.subnet), formatLeaseFile({ subnet: lease.subnet, publicIp: lease.ip, backendType: backend, backendData: {}, expiration: Date.now() + 3_600_000 }));
  const subnetFile = join(sub, 'subnet.env');
  if (env !== null) writeFileSync(subnetFile, env);
  return { netConfPath, leases, subnetFile };
}

const ENV = 'FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.7.1/24\nFLANNEL_MTU=1472\nFLANNEL_IPMASQ=false\n';

void describe('startUdpEarly declines', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('with WEFT_UDP_EARLY=0, on the kube store, on another backend, without subnet.env', async () => {
    const f = files('udp', ENV, { subnet: '10.244.7.0/24', ip: '192.0.2.11' });
    process.env['WEFT_UDP_EARLY'] = '0';
    try {
      assert.equal(await startUdpEarly({ store: { store: `file:${f.leases}`, netConfPath: f.netConfPath }, subnetFile: f.subnetFile, log }, rtnl, UPLINK), undefined);
    } finally {
      delete process.env['WEFT_UDP_EARLY'];
    }
    assert.equal(await startUdpEarly({ store: { kubeSubnetMgr: true, nodeName: 'n1', netConfPath: f.netConfPath }, subnetFile: f.subnetFile, log }, rtnl, UPLINK), undefined);
    const vx = files('vxlan', ENV, { subnet: '10.244.7.0/24', ip: '192.0.2.11' });
    assert.equal(await startUdpEarly({ store: { store: `file:${vx.leases}`, netConfPath: vx.netConfPath }, subnetFile: vx.subnetFile, log }, rtnl, UPLINK), undefined);
    const noEnv = files('udp', null, { subnet: '10.244.7.0/24', ip: '192.0.2.11' });
    assert.equal(await startUdpEarly({ store: { store: `file:${noEnv.leases}`, netConfPath: noEnv.netConfPath }, subnetFile: noEnv.subnetFile, log }, rtnl, UPLINK), undefined);
  });

  it('when the remembered lease now belongs to another node, or etcd does not answer', async () => {
    const f = files('udp', ENV, { subnet: '10.244.7.0/24', ip: '192.0.2.99' });
    assert.equal(await startUdpEarly({ store: { store: `file:${f.leases}`, netConfPath: f.netConfPath }, subnetFile: f.subnetFile, log }, rtnl, UPLINK), undefined);
    assert.ok(lines.some((l) => l.includes('no lease 10.244.7.0/24 for 192.0.2.11')), lines.join(''));
    assert.equal(await startUdpEarly({ store: { etcdEndpoints: 'http://127.0.0.1:9' }, subnetFile: f.subnetFile, log }, rtnl, UPLINK), undefined);
  });

  it('earlyStillFits: the same Network and Backend only', () => {
    const conf = parseNetConf('{"Network":"10.244.0.0/16","Backend":{"Type":"udp"}}');
    const early = { netConf: conf } as EarlyUdp;
    assert.equal(earlyStillFits(early, parseNetConf('{"Network":"10.244.0.0/16","Backend":{"Type":"udp"}}')), true);
    assert.equal(earlyStillFits(early, parseNetConf('{"Network":"10.244.0.0/16","Backend":{"Type":"udp","Port":8286}}')), false);
    assert.equal(earlyStillFits(early, parseNetConf('{"Network":"10.245.0.0/16","Backend":{"Type":"udp"}}')), false);
  });
});
