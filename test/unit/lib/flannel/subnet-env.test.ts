// subnet.env: the exact format flannel writes, atomic replacement, and a strict but tolerant parser.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatSubnetEnv, gatewayForm6, networkForm, parseSubnetEnv, writeSubnetEnv } from '../../../../lib/flannel/subnet-env.ts';

const input = { network: '10.244.0.0/16', leaseSubnet: '10.244.3.0/24', mtu: 1450, ipMasq: true };

void describe('subnet.env', () => {
  void it('formats like flannel: gateway address with the lease prefix', () => {
    assert.equal(formatSubnetEnv(input), 'FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.3.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n');
    assert.throws(() => formatSubnetEnv({ ...input, leaseSubnet: '10.244.3.1/24' }), /not an IPv4 network/);
  });

  void it('round-trips through parse', () => {
    assert.deepEqual(parseSubnetEnv(formatSubnetEnv({ ...input, ipMasq: false })), {
      network: '10.244.0.0/16', subnet: '10.244.3.1/24', mtu: 1450, ipMasq: false,
    });
  });

  void it('tolerates comments, blank lines, CRLF and unknown keys', () => {
    const text = '# written by hand\r\n\r\nFLANNEL_NETWORK=10.1.0.0/16\r\n  FLANNEL_SUBNET=10.1.7.1/24\nWEFT_SOMETHING=fd00::/48\nFLANNEL_MTU=1500\nFLANNEL_IPMASQ=false\n';
    assert.deepEqual(parseSubnetEnv(text), { network: '10.1.0.0/16', subnet: '10.1.7.1/24', mtu: 1500, ipMasq: false });
  });

  void it('rejects garbage and missing or bad values', () => {
    const good = formatSubnetEnv(input);
    assert.throws(() => parseSubnetEnv(`${good}this is not a line\n`), /line 5: expected KEY=VALUE/);
    assert.throws(() => parseSubnetEnv(good.replace('FLANNEL_MTU=1450\n', '')), /FLANNEL_MTU is missing/);
    assert.throws(() => parseSubnetEnv(good.replace('1450', '14x0')), /FLANNEL_MTU "14x0"/);
    assert.throws(() => parseSubnetEnv(good.replace('=true', '=yes')), /FLANNEL_IPMASQ "yes"/);
    assert.throws(() => parseSubnetEnv(good.replace('10.244.3.1/24', '10.99.3.1/24')), /not an address\/prefix inside/);
    assert.throws(() => parseSubnetEnv(good.replace('10.244.3.1/24', '10.244.3.0/24')), /network address/);
    assert.throws(() => parseSubnetEnv(good.replace('10.244.0.0/16', '10.244.0.0')), /FLANNEL_NETWORK/);
  });

  void it('writes atomically, replacing the old file and leaving no temp file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-subnet-env-'));
    try {
      const path = join(dir, 'run', 'flannel', 'subnet.env');
      writeSubnetEnv(path, input);
      writeFileSync(join(dir, 'marker'), '');
      writeSubnetEnv(path, { ...input, leaseSubnet: '10.244.9.0/24' });
      assert.equal(parseSubnetEnv(readFileSync(path, 'utf8')).subnet, '10.244.9.1/24');
      assert.deepEqual(readdirSync(join(dir, 'run', 'flannel')), ['subnet.env']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// flannel's WriteSubnetFile (pkg/subnet/subnet.go): the enabled families in order, each subnet as
// its first usable address; IPv6-only files carry no FLANNEL_NETWORK / FLANNEL_SUBNET.
void describe('subnet.env dual stack', () => {
  const dual = { ...input, ipv6Network: 'fd00:10:244::/56', ipv6LeaseSubnet: 'fd00:10:244:3::/64' };
  const dualText = 'FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.3.1/24\nFLANNEL_IPV6_NETWORK=fd00:10:244::/56\nFLANNEL_IPV6_SUBNET=fd00:10:244:3::1/64\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n';

  void it('writes both families in flannel\'s order; IPv6 in gateway form', () => {
    assert.equal(formatSubnetEnv(dual), dualText);
    assert.equal(gatewayForm6('fd00:10:244:3::/64'), 'fd00:10:244:3::1/64');
    assert.equal(gatewayForm6('fd00::/126'), 'fd00::1/126');
    assert.throws(() => gatewayForm6('fd00:10:244:3::1/64'), /not an IPv6 network/);
    assert.throws(() => formatSubnetEnv({ ...input, ipv6Network: 'fd00:10:244::/56' }), /go together/);
  });

  void it('writes an IPv6-only file as flannel does (EnableIPv4 false)', () => {
    const text = formatSubnetEnv({ network: '', leaseSubnet: '', mtu: 1430, ipMasq: false, ipv6Network: 'fd00::/48', ipv6LeaseSubnet: 'fd00:0:0:7::/64' });
    assert.equal(text, 'FLANNEL_IPV6_NETWORK=fd00::/48\nFLANNEL_IPV6_SUBNET=fd00:0:0:7::1/64\nFLANNEL_MTU=1430\nFLANNEL_IPMASQ=false\n');
    assert.deepEqual(parseSubnetEnv(text), { network: '', subnet: '', mtu: 1430, ipMasq: false, ipv6Network: 'fd00::/48', ipv6Subnet: 'fd00:0:0:7::1/64' });
    assert.throws(() => formatSubnetEnv({ network: '', leaseSubnet: '', mtu: 1430, ipMasq: false }), /neither/);
  });

  void it('round-trips, and reads flanneld\'s dual-stack file', () => {
    assert.deepEqual(parseSubnetEnv(dualText), {
      network: '10.244.0.0/16', subnet: '10.244.3.1/24', mtu: 1450, ipMasq: true, ipv6Network: 'fd00:10:244::/56', ipv6Subnet: 'fd00:10:244:3::1/64',
    });
    assert.equal(networkForm('fd00:10:244:3::1/64'), 'fd00:10:244:3::/64');
  });

  void it('rejects half or bad IPv6 pairs, naming the key', () => {
    const without = (key: string) => dualText.split('\n').filter((l) => !l.startsWith(`${key}=`)).join('\n');
    assert.throws(() => parseSubnetEnv(without('FLANNEL_IPV6_SUBNET')), /FLANNEL_IPV6_SUBNET is missing/);
    assert.throws(() => parseSubnetEnv(without('FLANNEL_IPV6_NETWORK')), /FLANNEL_IPV6_NETWORK is missing/);
    assert.throws(() => parseSubnetEnv(without('FLANNEL_SUBNET')), /FLANNEL_SUBNET is missing/);
    assert.throws(() => parseSubnetEnv(dualText.replace('FLANNEL_IPV6_NETWORK=fd00:10:244::/56', 'FLANNEL_IPV6_NETWORK=10.9.0.0/16')), /FLANNEL_IPV6_NETWORK "10.9.0.0\/16" is not an IPv6 network/);
    assert.throws(() => parseSubnetEnv(dualText.replace('fd00:10:244:3::1/64', 'fd01::1/64')), /FLANNEL_IPV6_SUBNET "fd01::1\/64" is not an address\/prefix inside/);
    assert.throws(() => parseSubnetEnv(dualText.replace('fd00:10:244:3::1/64', 'fd00:10:244:3::/64')), /network address, expected the gateway/);
  });
});
