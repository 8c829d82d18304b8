// parsePortmapConfig: defaults, normalisation of runtimeConfig.portMappings, refusals with their codes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CniError } from '../../../../lib/cni/errors.ts';
import { mappingKey, parsePortmapConfig, parsePortmapDelConfig } from '../../../../plugins/portmap/config.ts';

const base = { cniVersion: '1.0.0', name: 'net1', type: 'portmap' };
const parse = (extra: Record<string, unknown>) => parsePortmapConfig({ config: { ...base, ...extra }, cniVersion: '1.0.0' });
const pm = (portMappings: unknown[]) => parse({ runtimeConfig: { portMappings } });
const code = (n: number, text?: string) => (e: unknown) => e instanceof CniError && e.code === n && (text === undefined || `${e.msg} ${e.details}`.includes(text));

describe('parsePortmapConfig', () => {
  it('defaults: snat on, masqAll off, no mappings', () => {
    assert.deepEqual(parse({}), { name: 'net1', cniVersion: '1.0.0', snat: true, masqAll: false, mappings: [], validAttachments: null });
    assert.equal(parse({ snat: false, masqAll: true }).snat, false);
    assert.equal(parse({ snat: false, masqAll: true }).masqAll, true);
  });

  it('normalises protocol case, default tcp, and hostIP forms', () => {
    const c = pm([
      { hostPort: 8080, containerPort: 80 },
      { hostPort: 53, containerPort: 53, protocol: 'UDP', hostIP: '' },
      { hostPort: 9000, containerPort: 90, protocol: 'sctp', hostIP: '0.0.0.0' },
      { hostPort: 9001, containerPort: 91, protocol: 'tcp', hostIP: '::' },
      { hostPort: 9002, containerPort: 92, protocol: 'tcp', hostIP: 'FD00:0:0::0001' },
      { hostPort: 9003, containerPort: 93, protocol: 'tcp', hostIP: '::ffff:192.0.2.7' },
    ]);
    assert.deepEqual(c.mappings, [
      { hostPort: 8080, containerPort: 80, protocol: 'tcp' },
      { hostPort: 53, containerPort: 53, protocol: 'udp' },
      { hostPort: 9000, containerPort: 90, protocol: 'sctp', family: 4 },
      { hostPort: 9001, containerPort: 91, protocol: 'tcp', family: 6 },
      { hostPort: 9002, containerPort: 92, protocol: 'tcp', hostIP: 'fd00::1', family: 6 },
      { hostPort: 9003, containerPort: 93, protocol: 'tcp', hostIP: '192.0.2.7', family: 4 },
    ]);
  });

  it('drops exact repeats, refuses one hostPort mapped to two container ports (code 7)', () => {
    assert.equal(pm([{ hostPort: 80, containerPort: 80 }, { hostPort: 80, containerPort: 80, protocol: 'tcp' }]).mappings.length, 1);
    assert.equal(pm([{ hostPort: 80, containerPort: 80 }, { hostPort: 80, containerPort: 80, protocol: 'udp' }]).mappings.length, 2);
    assert.throws(() => pm([{ hostPort: 80, containerPort: 80 }, { hostPort: 80, containerPort: 81 }]), code(7, 'tcp/*/80'));
  });

  it('refuses bad values naming the field (code 7)', () => {
    assert.throws(() => pm([{ hostPort: 0, containerPort: 80 }]), code(7, 'hostPort'));
    assert.throws(() => pm([{ hostPort: 65536, containerPort: 80 }]), code(7, 'hostPort'));
    assert.throws(() => pm([{ hostPort: 80 }]), code(7, 'containerPort'));
    assert.throws(() => pm([{ hostPort: 80, containerPort: 80, protocol: 'icmp' }]), code(7, 'portMappings.0.protocol'));
    assert.throws(() => pm([{ hostPort: 80, containerPort: 80, hostIP: '10.0.0.1; flush ruleset' }]), code(7, 'hostIP'));
    assert.throws(() => parse({ snat: 'yes' }), code(7, 'snat'));
  });

  it('accepts every reference key (iptables-only ones without effect); refuses what the reference refuses', () => {
    const full = parse({ conditionsV4: ['-s', '1.2.3.4'], conditionsV6: ['!', '-d', '::1'], externalSetMarkChain: 'KUBE-MARK-MASQ', backend: 'iptables', snat: false, masqAll: true });
    assert.equal(full.snat, false);
    assert.equal(full.masqAll, true);
    assert.equal(parse({ conditionsV4: [], conditionsV6: [], markMasqBit: 13 }).snat, true);
    assert.throws(() => parse({ markMasqBit: 13, externalSetMarkChain: 'KUBE-MARK-MASQ' }), code(7, 'markMasqBit'));
    assert.throws(() => parse({ markMasqBit: 32 }), code(7, 'markMasqBit'));
    assert.throws(() => parse({ externalSetMarkChain: 5 }), code(7, 'externalSetMarkChain'));
  });

  it('decodes keys as Go does: containerd 1.6 portMappings spelled HostPort/ContainerPort/Protocol/HostIP', () => {
    const c = parse({ RuntimeConfig: { PortMappings: [{ HostPort: 8080, ContainerPort: 80, Protocol: 'TCP', HostIP: '' }] }, SNAT: false });
    assert.deepEqual(c.mappings, [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }]);
    assert.equal(c.snat, false);
    assert.throws(() => parse({ runtimeConfig: { portMappings: [{ HostPort: '8080', ContainerPort: 80 }] } }), code(7, 'hostPort'));
  });

  it('DEL reads any config: the network name when ADD would refuse it', () => {
    const del = (extra: Record<string, unknown>) => parsePortmapDelConfig({ config: { cniVersion: '1.0.0', name: 'net1', type: 'portmap', ...extra }, cniVersion: '1.0.0' });
    assert.equal(del({ markMasqBit: 99, snat: 'yes' }).name, 'net1');
    assert.deepEqual(del({ runtimeConfig: { portMappings: [{ hostPort: 0 }] } }).mappings, []);
    assert.equal(del({ NAME: 'net2', masqAll: 1 }).name, 'net2');
  });

  it('reads GC valid attachments; refuses malformed ones (code 7)', () => {
    const c = parse({ 'cni.dev/valid-attachments': [{ containerID: 'c1', ifname: 'eth0' }] });
    assert.deepEqual(c.validAttachments, [{ containerId: 'c1', ifName: 'eth0' }]);
    assert.throws(() => parse({ 'cni.dev/valid-attachments': [{ containerID: 'c1' }] }), code(7, 'ifname'));
  });

  it('mappingKey tells wildcard, per-family wildcard and specific hostIPs apart', () => {
    const keys = pm([
      { hostPort: 80, containerPort: 80 },
      { hostPort: 80, containerPort: 80, hostIP: '0.0.0.0' },
      { hostPort: 80, containerPort: 80, hostIP: '192.0.2.1' },
    ]).mappings.map(mappingKey);
    assert.deepEqual(keys, ['tcp/*/80', 'tcp/*4/80', 'tcp/192.0.2.1/80']);
  });
});
