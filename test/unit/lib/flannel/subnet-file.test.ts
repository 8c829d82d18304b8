import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CniError } from '../../../../lib/cni/errors.ts';
import { formatSubnetEnv } from '../../../../lib/flannel/subnet-env.ts';
import { parseFlannelSubnetFile, readFlannelSubnetFile } from '../../../../lib/flannel/subnet-file.ts';

const V4 = 'FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.3.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n';

function fails(text: string, code: number, re: RegExp): void {
  assert.throws(() => parseFlannelSubnetFile(text, '/run/flannel/subnet.env'),
    (e: unknown) => e instanceof CniError && e.code === code && re.test(e.msg) && /Check the flannel pod log for this node\.$/.test(e.msg));
}

void describe('subnet.env as flannel reads it', () => {
  it('reads the IPv4 keys as weftd and flanneld write them', () => {
    assert.deepEqual(parseFlannelSubnetFile(V4, 'f'), {
      network: '10.244.0.0/16', subnet: '10.244.3.1/24', mtu: 1450, ipMasq: true, networks: ['10.244.0.0/16'], ipv6Networks: [],
    });
  });

  it('dual-stack: IPv6 keys, comma lists with duplicates dropped, networks canonical', () => {
    const env = parseFlannelSubnetFile(
      'FLANNEL_NETWORK=10.244.0.0/16,10.245.0.1/16,10.244.0.0/16\nFLANNEL_SUBNET=10.244.3.1/24\n' +
      'FLANNEL_IPV6_NETWORK=2001:cafe:42::/56\nFLANNEL_IPV6_SUBNET=2001:cafe:42:3::1/64\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=false\nFOO=bar\n', 'f');
    assert.deepEqual(env.networks, ['10.244.0.0/16', '10.245.0.0/16']);
    assert.deepEqual(env.ipv6Networks, ['2001:cafe:42::/56']);
    assert.equal(env.ipv6Subnet, '2001:cafe:42:3::1/64');
    assert.equal(env.ipMasq, false);
  });

  it('IPv6 only is complete; FLANNEL_IPMASQ other than "true" is false, as in flannel', () => {
    const env = parseFlannelSubnetFile('FLANNEL_IPV6_NETWORK=fd00::/48\nFLANNEL_IPV6_SUBNET=fd00:0:0:1::1/64\nFLANNEL_MTU=1500\nFLANNEL_IPMASQ=yes\n', 'f');
    assert.equal(env.network, '');
    assert.equal(env.subnet, '');
    assert.equal(env.ipMasq, false);
  });

  it('names what is missing in flannel\'s words (code 11: weftd is not done yet)', () => {
    fails('FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.3.1/24\n', 11,
      /^failed to load flannel 'subnet.env' file: \/run\/flannel\/subnet.env is missing FLANNEL_MTU, FLANNEL_IPMASQ\./);
    fails('FLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n', 11, /is missing FLANNEL_NETWORK, FLANNEL_IPV6_NETWORK, FLANNEL_SUBNET, FLANNEL_IPV6_SUBNET\./);
  });

  it('refuses bad values (code 5)', () => {
    fails(V4.replace('10.244.0.0/16', '10.244.0.0/33'), 5, /invalid CIDR address: 10.244.0.0\/33/);
    fails(V4.replace('FLANNEL_MTU=1450', 'FLANNEL_MTU=-1'), 5, /invalid FLANNEL_MTU "-1"/);
    fails(V4.replace('FLANNEL_SUBNET=10.244.3.1/24', 'FLANNEL_SUBNET=x'), 5, /invalid CIDR address: x/);
  });

  it('a missing file: flannel\'s message, code 11', () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-subnet-file-'));
    try {
      const path = join(dir, 'subnet.env');
      assert.throws(() => readFlannelSubnetFile(path), (e: unknown) => e instanceof CniError && e.code === 11 &&
        e.msg === `failed to load flannel 'subnet.env' file: open ${path}: no such file or directory. Check the flannel pod log for this node.`);
      writeFileSync(path, V4);
      assert.equal(readFlannelSubnetFile(path).mtu, 1450);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// The plugins' reader and weftd's writer must agree on every file weftd writes.
void describe('subnet.env: the plugins read what weftd writes', () => {
  void it('dual stack and IPv6-only', () => {
    const dual = parseFlannelSubnetFile(formatSubnetEnv({ network: '10.244.0.0/16', leaseSubnet: '10.244.3.0/24', mtu: 1450, ipMasq: true, ipv6Network: 'fd00:10:244::/56', ipv6LeaseSubnet: 'fd00:10:244:3::/64' }), 'f');
    assert.deepEqual(dual, { network: '10.244.0.0/16', subnet: '10.244.3.1/24', mtu: 1450, ipMasq: true, networks: ['10.244.0.0/16'], ipv6Networks: ['fd00:10:244::/56'], ipv6Subnet: 'fd00:10:244:3::1/64' });
    const v6 = parseFlannelSubnetFile(formatSubnetEnv({ network: '', leaseSubnet: '', mtu: 1430, ipMasq: false, ipv6Network: 'fd00::/48', ipv6LeaseSubnet: 'fd00:0:0:7::/64' }), 'f');
    assert.deepEqual(v6, { network: '', subnet: '', mtu: 1430, ipMasq: false, networks: [], ipv6Networks: ['fd00::/48'], ipv6Subnet: 'fd00:0:0:7::1/64' });
  });
});
