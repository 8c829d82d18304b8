import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHAIN_EG, CHAIN_IN, desiredPolicy, SET_ISO_IN, SET_ISO_IN6, SET_NODE6, tableFamilies, type PolicyWorld } from '../../../../agent/policy/desired.ts';
import { trimPod, trimPolicy, type PodInfo, type Policy } from '../../../../agent/policy/types.ts';
import { MAP_IN, MAP_IN6 } from '../../../../agent/policy/groups.ts';

function pod(ns: string, name: string, ips: string[], labels: Record<string, string>, host = '192.0.2.11', ports: { name: string; containerPort: number }[] = []): PodInfo {
  const p = trimPod({ metadata: { namespace: ns, name, labels }, spec: { containers: [{ ports }] }, status: { podIPs: ips.map((ip) => ({ ip })), hostIP: host, phase: 'Running' } });
  assert.ok(p);
  return p;
}

function world(policies: Policy[], pods: PodInfo[], nodeAddrs = ['10.1.1.1', 'fd00:1:1::1']): PolicyWorld {
  const ns = new Map(['x', 'y'].map((n) => [n, { ns: n, 'kubernetes.io/metadata.name': n }]));
  return { policies, pods, namespaces: ns, isLocal: (p) => p.hostIP === '192.0.2.11', nodeAddrs };
}

const dual = [
  pod('x', 'a', ['10.1.1.2', 'fd00:1:1::2'], { pod: 'a' }, '192.0.2.11', [{ name: 'web', containerPort: 8080 }]),
  pod('x', 'b', ['10.1.1.3', 'fd00:1:1::3'], { pod: 'b' }),
  pod('y', 'b', ['10.1.2.3', 'fd00:1:2::3'], { pod: 'b' }, '192.0.2.12'),
];

function rulesOf(d: ReturnType<typeof desiredPolicy>, chain: string | undefined): string[] {
  assert.ok(chain);
  return (d.content.chains.get(chain)?.rules ?? []).map((r) => r.text);
}

function elems(d: ReturnType<typeof desiredPolicy>, rule: string | undefined, nth = 0): string[] {
  const m = [...(rule ?? '').matchAll(/@([a-z0-9-]+)/g)][nth];
  assert.ok(m?.[1], `a set in ${rule}`);
  return [...(d.content.sets.get(m[1])?.elements ?? [])].sort();
}

void describe('desiredPolicy, IPv6', () => {
  it('an IPv4-only cluster has no IPv6 set or rule and lets IPv6 pass', () => {
    const d = desiredPolicy(world([trimPolicy({ metadata: { namespace: 'x', name: 'deny' }, spec: { podSelector: {} } })], [pod('x', 'a', ['10.1.1.2'], {})], ['10.1.1.1']));
    assert.deepEqual(tableFamilies(world([], [pod('x', 'a', ['10.1.1.2'], {})], ['10.1.1.1'])), [4]);
    assert.equal(d.content.sets.has(SET_ISO_IN6), false);
    assert.equal(rulesOf(d, CHAIN_IN)[0], 'meta nfproto != ipv4 accept');
    assert.ok(![...d.content.chains.values()].some((c) => c.rules.some((r) => r.text.includes('ip6 '))));
  });

  it('dual-stack pods: both addresses isolated, policy chains return for either family, IPv6 node addresses accepted', () => {
    const d = desiredPolicy(world([trimPolicy({ metadata: { namespace: 'x', name: 'deny' }, spec: { podSelector: {} } })], dual));
    assert.deepEqual([...(d.content.sets.get(SET_ISO_IN)?.elements ?? [])].sort(), ['10.1.1.2', '10.1.1.3']);
    assert.deepEqual([...(d.content.sets.get(SET_ISO_IN6)?.elements ?? [])].sort(), ['fd00:1:1::2', 'fd00:1:1::3']);
    assert.deepEqual([...(d.content.sets.get(SET_NODE6)?.elements ?? [])], ['fd00:1:1::1']);
    assert.equal(d.isolated.ingress, 2, 'pods, not addresses');
    const base = rulesOf(d, CHAIN_IN);
    assert.ok(!base.includes('meta nfproto != ipv4 accept'));
    assert.ok(base.includes(`ip6 daddr != @${SET_ISO_IN6} accept`));
    const rules = rulesOf(d, d.plans[0]?.ingressChain);
    assert.deepEqual(rules.map((r) => r.replace(/@\S+/, '@X')), ['ip daddr != @X return', 'ip6 daddr != @X return']);
    assert.deepEqual(elems(d, rules[1]), ['fd00:1:1::2', 'fd00:1:1::3']);
    const group = (map: string, ip: string): string | undefined => /: jump (\S+)$/.exec([...(d.content.sets.get(map)?.elements ?? [])].find((e) => e.startsWith(`${ip} : `)) ?? '')?.[1];
    const g4 = group(MAP_IN, '10.1.1.2');
    assert.ok(g4 !== undefined);
    assert.equal(group(MAP_IN6, 'fd00:1:1::2'), g4, 'one group chain for both families');
    assert.equal(rulesOf(d, g4).filter((r) => r === `counter name ${d.plans[0]?.ingressCounter}`).length, 1, 'one counter for both families');
    assert.deepEqual(rulesOf(d, 'pol-drop-in'), ['counter name drops-in drop']);
  });

  it('a pod peer gives one rule per family; a rule naming no address one rule for both', () => {
    const pol = trimPolicy({ metadata: { namespace: 'x', name: 'p' }, spec: { podSelector: { matchLabels: { pod: 'a' } }, ingress: [{ from: [{ namespaceSelector: {}, podSelector: { matchLabels: { pod: 'b' } } }] }, { ports: [{ port: 81 }] }] } });
    const d = desiredPolicy(world([pol], dual));
    const rules = rulesOf(d, d.plans[0]?.ingressChain).slice(2);
    assert.equal(rules.length, 3);
    assert.match(rules[0] ?? '', /^ip saddr @s-\S+ accept$/);
    assert.deepEqual(elems(d, rules[0]), ['10.1.1.3', '10.1.2.3']);
    assert.match(rules[1] ?? '', /^ip6 saddr @s6-\S+ accept$/);
    assert.deepEqual(elems(d, rules[1]), ['fd00:1:1::3', 'fd00:1:2::3']);
    assert.equal(rules[2], 'meta l4proto tcp th dport 81 accept');
  });

  it('ipBlocks apply to their own family only, except lists too', () => {
    const pol = trimPolicy({ metadata: { namespace: 'x', name: 'p' }, spec: { podSelector: {}, policyTypes: ['Egress'], egress: [{ to: [
      { ipBlock: { cidr: 'fd00:1::/32', except: ['fd00:1:2::/48', '10.0.0.0/8'] } }, { ipBlock: { cidr: '10.1.0.0/16' } },
    ] }] } });
    const d = desiredPolicy(world([pol], dual, ['10.1.1.1']));
    assert.deepEqual(tableFamilies(world([pol], [], ['10.1.1.1'])), [4, 6], 'an IPv6 ipBlock alone turns IPv6 on');
    const rules = rulesOf(d, d.plans[0]?.egressChain).slice(2);
    assert.equal(rules.length, 2);
    assert.match(rules[0] ?? '', /^ip6 daddr @b6-\S+ ip6 daddr != @b6-\S+ accept$/);
    assert.deepEqual(elems(d, rules[0], 0), ['fd00:1::/32']);
    assert.deepEqual(elems(d, rules[0], 1), ['fd00:1:2::/48']);
    assert.match(rules[1] ?? '', /^ip daddr @b-\S+ accept$/);
    assert.deepEqual(elems(d, rules[1]), ['10.1.0.0/16']);
    assert.ok(rulesOf(d, CHAIN_EG).some((r) => r.startsWith('ip6 saddr != @')));
  });

  it('a named port resolves on IPv6 addresses into an ipv6_addr . inet_proto . inet_service set', () => {
    const pol = trimPolicy({ metadata: { namespace: 'x', name: 'p' }, spec: { podSelector: {}, ingress: [{ ports: [{ port: 'web' }] }] } });
    const d = desiredPolicy(world([pol], dual));
    const rules = rulesOf(d, d.plans[0]?.ingressChain).slice(2);
    assert.deepEqual(rules.map((r) => r.replace(/@\S+/, '@X')), ['ip daddr . meta l4proto . th dport @X accept', 'ip6 daddr . meta l4proto . th dport @X accept']);
    assert.deepEqual(elems(d, rules[1]), ['fd00:1:1::2 . tcp . 8080']);
    const name = /@(\S+)/.exec(rules[1] ?? '')?.[1] ?? '';
    assert.deepEqual(d.content.sets.get(name)?.spec.type, ['ipv6_addr', 'inet_proto', 'inet_service']);
  });
});
