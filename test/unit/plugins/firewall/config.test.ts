import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cniCode } from '../../lib/cni/helpers.ts';
import { parseFirewallConfig } from '../../../../plugins/firewall/config.ts';
import { delNetwork } from '../../../../plugins/firewall/del.ts';

const base = { cniVersion: '1.0.0', name: 'podman', type: 'firewall' };
const parse = (extra: Record<string, unknown>) => parseFirewallConfig({ config: { ...base, ...extra } as never });
const code = cniCode;

describe('firewall config', () => {
  it('defaults as the reference: admin chain CNI-ADMIN, zone trusted, open ingress', () => {
    const c = parse({});
    assert.equal(c.adminChain, 'CNI-ADMIN');
    assert.equal(c.firewalldZone, 'trusted');
    assert.equal(c.ingressPolicy, 'open');
    assert.equal(c.backend, '');
    assert.equal(c.validAttachments, null);
  });

  it('accepts every backend value (nftables does the work) and keeps it', () => {
    for (const b of ['iptables', 'firewalld', 'nftables', 'something']) assert.equal(parse({ backend: b }).backend, b);
  });

  it('ingressPolicy: "" and open are open, same-bridge and isolated isolate, anything else is code 7', () => {
    assert.equal(parse({ ingressPolicy: '' }).ingressPolicy, 'open');
    assert.equal(parse({ ingressPolicy: 'same-bridge' }).ingressPolicy, 'same-bridge');
    assert.equal(parse({ ingressPolicy: 'isolated' }).ingressPolicy, 'isolated');
    assert.equal(code(() => parse({ ingressPolicy: 'Same-Bridge' })), 7);
  });

  it('iptablesAdminChainName: custom names kept, names nft could misread refused with code 7', () => {
    assert.equal(parse({ iptablesAdminChainName: 'MY-ADMIN_1' }).adminChain, 'MY-ADMIN_1');
    for (const bad of ['1abc', 'a b', 'a;flush ruleset', 'x'.repeat(64), 'a"b', 'fw-unmark', 'FW-isolation', 'bridge-masq-1', 'portmap-pre']) assert.equal(code(() => parse({ iptablesAdminChainName: bad })), 7, bad);
  });

  it('wrong JSON types are refused (code 7)', () => {
    assert.equal(code(() => parse({ backend: 1 })), 7);
    assert.equal(code(() => parse({ ingressPolicy: true })), 7);
  });

  it('reads GC valid attachments', () => {
    const c = parse({ 'cni.dev/valid-attachments': [{ containerID: 'abc', ifname: 'eth0' }] });
    assert.deepEqual(c.validAttachments, [{ containerId: 'abc', ifName: 'eth0' }]);
  });
});

describe('firewall DEL config', () => {
  it('a DEL with a config ADD refuses still names its network (DEL never blocks cleanup)', () => {
    assert.equal(delNetwork({ config: { ...base, ingressPolicy: 'bogus' } as never }), 'podman');
    assert.equal(delNetwork({ config: { ...base, iptablesAdminChainName: 'bad name' } as never }), 'podman');
    assert.equal(delNetwork({ config: { ...base, backend: 5 } as never }), 'podman');
    assert.equal(delNetwork({ config: { ...base, NAME: 'x', name: undefined } as never }), 'x');
    assert.equal(delNetwork({ config: { cniVersion: '1.0.0', type: 'firewall', ingressPolicy: 'bogus' } as never }), '');
  });
});

describe('firewall config decoding (Go encoding/json semantics)', () => {
  it('matches keys case-insensitively, exact spelling preferred', () => {
    assert.equal(parse({ IngressPolicy: 'same-bridge' }).ingressPolicy, 'same-bridge');
    assert.equal(parse({ IPTABLESADMINCHAINNAME: 'X-ADMIN' }).adminChain, 'X-ADMIN');
    assert.equal(parse({ ingresspolicy: 'open', ingressPolicy: 'same-bridge' }).ingressPolicy, 'same-bridge');
  });
});
