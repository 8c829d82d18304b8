// planElements/containerIps: which nft elements one attachment owns, per family, snat and masqAll.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CniError } from '../../../../lib/cni/errors.ts';
import type { PortmapConfig } from '../../../../plugins/portmap/config.ts';
import { containerIps, planElements } from '../../../../plugins/portmap/plan.ts';

const RESULT = {
  interfaces: [{ name: 'cni0', mac: 'aa' }, { name: 'veth1', mac: 'bb' }, { name: 'eth0', mac: 'cc', sandbox: '/run/netns/p' }],
  ips: [
    { address: '10.244.0.1/24', interface: 0 },
    { address: '10.244.0.5/24', gateway: '10.244.0.1', interface: 2 },
    { address: '10.244.0.6/24', interface: 2 },
    { address: 'fd00:244:0:0::5/64', interface: 2 },
  ],
};
const cfg = (mappings: PortmapConfig['mappings'], extra: Partial<PortmapConfig> = {}): PortmapConfig => ({ name: 'n', cniVersion: '1.0.0', snat: true, masqAll: false, mappings, validAttachments: null, ...extra });

describe('containerIps', () => {
  it('takes the first address of each family on a sandbox interface, with its subnet', () => {
    assert.deepEqual(containerIps(RESULT), { v4: '10.244.0.5', subnet4: '10.244.0.0/24', v6: 'fd00:244::5', subnet6: 'fd00:244::/64' });
  });
  it('accepts results without interfaces (IPAM-style) and host routes (/32 stays a bare address)', () => {
    assert.deepEqual(containerIps({ ips: [{ address: '192.168.9.9/32' }] }), { v4: '192.168.9.9', subnet4: '192.168.9.9' });
    assert.deepEqual(containerIps({}), {});
  });
});

describe('planElements', () => {
  const ips = containerIps(RESULT);

  it('any-address mapping: DNAT per family, hairpin by subnet, localhost for IPv4 only', () => {
    const els = planElements(cfg([{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }]), ips);
    assert.deepEqual(els.map(({ set, key, data }) => ({ set, key, data })), [
      { set: 'portmap-dnat4', key: ['tcp', 8080], data: ['10.244.0.5', 80] },
      { set: 'portmap-snat4', key: ['10.244.0.0/24', '10.244.0.5', 'tcp', 80], data: undefined },
      { set: 'portmap-snat4', key: ['127.0.0.1', '10.244.0.5', 'tcp', 80], data: undefined },
      { set: 'portmap-dnat6', key: ['tcp', 8080], data: ['fd00:244::5', 80] },
      { set: 'portmap-snat6', key: ['fd00:244::/64', 'fd00:244::5', 'tcp', 80], data: undefined },
    ]);
  });

  it('hostIP mappings go to the address-keyed maps of their family only', () => {
    const els = planElements(cfg([{ hostPort: 53, containerPort: 5353, protocol: 'udp', hostIP: '192.0.2.1', family: 4 }], { snat: false }), ips);
    assert.deepEqual(els, [{ set: 'portmap-hostip4', key: ['192.0.2.1', 'udp', 53], data: ['10.244.0.5', 5353], mapping: { hostPort: 53, containerPort: 5353, protocol: 'udp', hostIP: '192.0.2.1', family: 4 } }]);
  });

  it('masqAll adds a masquerade element per family; two hostPorts to one container port share snat elements', () => {
    const els = planElements(cfg([{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }, { hostPort: 8081, containerPort: 80, protocol: 'tcp' }], { masqAll: true }), ips);
    assert.equal(els.filter((e) => e.set === 'portmap-masq4').length, 1);
    assert.equal(els.filter((e) => e.set === 'portmap-masq6').length, 1);
    assert.equal(els.filter((e) => e.set === 'portmap-snat4').length, 2);
    assert.equal(els.filter((e) => e.set === 'portmap-dnat4').length, 2);
  });

  it('a mapping without a container address of its family is code 122', () => {
    const v4only = containerIps({ ips: [{ address: '10.0.0.2/24' }] });
    assert.throws(
      () => planElements(cfg([{ hostPort: 80, containerPort: 80, protocol: 'tcp', family: 6 }]), v4only),
      (e: unknown) => e instanceof CniError && e.code === 122 && e.details.includes('10.0.0.2'),
    );
    assert.throws(() => planElements(cfg([{ hostPort: 80, containerPort: 80, protocol: 'tcp' }]), {}), (e: unknown) => e instanceof CniError && e.code === 122);
  });
});
