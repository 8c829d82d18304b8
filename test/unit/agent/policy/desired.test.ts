import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHAIN_IN, desiredPolicy, SET_ISO_EG, SET_ISO_IN, type PolicyWorld } from '../../../../agent/policy/desired.ts';
import { trimPod, trimPolicy, type PodInfo, type Policy } from '../../../../agent/policy/types.ts';

function pod(ns: string, name: string, ip: string, labels: Record<string, string>, host = '192.0.2.11', ports: { name: string; containerPort: number; protocol?: string }[] = []): PodInfo {
  const p = trimPod({ metadata: { namespace: ns, name, labels }, spec: { containers: [{ ports }] }, status: { podIP: ip, hostIP: host, phase: 'Running' } });
  assert.ok(p);
  return p;
}

function world(policies: Policy[], pods: PodInfo[]): PolicyWorld {
  const ns = new Map(['x', 'y', 'z'].map((n) => [n, { ns: n, 'kubernetes.io/metadata.name': n }]));
  return { policies, pods, namespaces: ns, isLocal: (p) => p.hostIP === '192.0.2.11', nodeAddrs: ['10.1.1.1'] };
}

const pods = [
  pod('x', 'a', '10.1.1.2', { pod: 'a' }), pod('x', 'b', '10.1.1.3', { pod: 'b' }), pod('y', 'a', '10.1.2.2', { pod: 'a' }, '192.0.2.12'),
  pod('y', 'b', '10.1.2.3', { pod: 'b' }, '192.0.2.12'), pod('z', 'a', '10.1.1.4', { pod: 'a' }),
];

function chainOf(d: ReturnType<typeof desiredPolicy>, key: string, dir: 'ingressChain' | 'egressChain'): string[] {
  const name = d.plans.find((p) => p.key === key)?.[dir];
  assert.ok(name, `${key} has a ${dir}`);
  return (d.content.chains.get(name)?.rules ?? []).map((r) => r.text);
}

function setByRef(d: ReturnType<typeof desiredPolicy>, text: string): string[] {
  const m = /@([a-z0-9-]+)/.exec(text);
  assert.ok(m?.[1]);
  return [...(d.content.sets.get(m[1])?.elements ?? [])].sort();
}

void describe('desiredPolicy', () => {
  it('default deny ingress: the local selected pods are isolated and the policy chain allows nothing', () => {
    const d = desiredPolicy(world([trimPolicy({ metadata: { namespace: 'x', name: 'deny' }, spec: { podSelector: {} } })], pods));
    assert.deepEqual([...(d.content.sets.get(SET_ISO_IN)?.elements ?? [])].sort(), ['10.1.1.2', '10.1.1.3']);
    assert.deepEqual([...(d.content.sets.get(SET_ISO_EG)?.elements ?? [])], []);
    const rules = chainOf(d, 'x/deny', 'ingressChain');
    assert.equal(rules.length, 1);
    assert.match(rules[0] ?? '', /^ip daddr != @s-[0-9a-f]+ return$/);
    assert.equal(d.plans[0]?.egressChain, undefined, 'policyTypes default to Ingress only without egress rules');
  });

  it('namespaceSelector and podSelector in one peer select their intersection, cluster-wide', () => {
    const pol = trimPolicy({ metadata: { namespace: 'x', name: 'p' }, spec: { podSelector: { matchLabels: { pod: 'a' } }, ingress: [{ from: [{ namespaceSelector: { matchExpressions: [{ key: 'ns', operator: 'In', values: ['y', 'z'] }] }, podSelector: { matchLabels: { pod: 'b' } } }] }] } });
    const d = desiredPolicy(world([pol], pods));
    const rules = chainOf(d, 'x/p', 'ingressChain');
    assert.equal(rules.length, 2);
    assert.deepEqual(setByRef(d, rules[1] ?? ''), ['10.1.2.3']);
    assert.match(rules[1] ?? '', /accept$/);
  });

  it('a peer podSelector alone means the policy namespace; a namespaceSelector alone every pod there', () => {
    const pol = trimPolicy({ metadata: { namespace: 'y', name: 'p' }, spec: { podSelector: {}, ingress: [{ from: [{ podSelector: {} }, { namespaceSelector: { matchLabels: { ns: 'z' } } }] }] } });
    const d = desiredPolicy(world([pol], pods));
    const rules = chainOf(d, 'y/p', 'ingressChain');
    assert.deepEqual(setByRef(d, rules[1] ?? ''), ['10.1.2.2', '10.1.2.3']);
    assert.deepEqual(setByRef(d, rules[2] ?? ''), ['10.1.1.4']);
    assert.deepEqual([...(d.content.sets.get(SET_ISO_IN)?.elements ?? [])], [], 'pods of other nodes are not isolated here');
  });

  it('named ports resolve per destination pod: one name, different numbers', () => {
    const ps = [pod('x', 'a', '10.1.1.2', { app: 's' }, '192.0.2.11', [{ name: 'http', containerPort: 80 }]),
      pod('x', 'b', '10.1.1.3', { app: 's' }, '192.0.2.11', [{ name: 'http', containerPort: 8080 }, { name: 'dns', containerPort: 53, protocol: 'UDP' }])];
    const pol = trimPolicy({ metadata: { namespace: 'x', name: 'np' }, spec: { podSelector: { matchLabels: { app: 's' } }, ingress: [{ ports: [{ port: 'http' }, { port: 'dns', protocol: 'UDP' }] }] } });
    const d = desiredPolicy(world([pol], ps));
    const rules = chainOf(d, 'x/np', 'ingressChain');
    assert.match(rules[1] ?? '', /^ip daddr \. meta l4proto \. th dport @n-[0-9a-f]+ accept$/);
    assert.deepEqual(setByRef(d, rules[1] ?? ''), ['10.1.1.2 . tcp . 80', '10.1.1.3 . tcp . 8080']);
    assert.deepEqual(setByRef(d, rules[2] ?? ''), ['10.1.1.3 . udp . 53']);
  });

  it('ports by number, endPort ranges and protocols; peers x ports make one rule each', () => {
    const pol = trimPolicy({ metadata: { namespace: 'x', name: 'pp' }, spec: { podSelector: {}, ingress: [{ from: [{ podSelector: {} }, { ipBlock: { cidr: '10.1.0.0/16', except: ['10.1.2.0/24', '10.1.2.128/25'] } }], ports: [{ port: 80 }, { protocol: 'UDP', port: 81, endPort: 90 }, { protocol: 'SCTP' }] }] } });
    const d = desiredPolicy(world([pol], pods));
    const rules = chainOf(d, 'x/pp', 'ingressChain').slice(1);
    assert.equal(rules.length, 6);
    assert.match(rules[0] ?? '', /^ip saddr @s-\w+ meta l4proto tcp th dport 80 accept$/);
    assert.match(rules[1] ?? '', /meta l4proto udp th dport 81-90 accept$/);
    assert.match(rules[2] ?? '', /meta l4proto sctp accept$/);
    assert.match(rules[3] ?? '', /^ip saddr @b-\w+ ip saddr != @b-\w+ meta l4proto tcp th dport 80 accept$/);
    const [, block, except] = /@(b-\w+) ip saddr != @(b-\w+)/.exec(rules[3] ?? '') ?? [];
    assert.deepEqual([...(d.content.sets.get(block ?? '')?.elements ?? [])], ['10.1.0.0/16']);
    assert.deepEqual([...(d.content.sets.get(except ?? '')?.elements ?? [])], ['10.1.2.0/24'], 'a covered except prefix is dropped (interval sets refuse overlaps)');
    assert.deepEqual(d.content.sets.get(block ?? '')?.spec.flags, ['interval']);
  });

  it('egress: default deny and an allow to pods by named port looked up on the peers', () => {
    const ps = [pod('x', 'a', '10.1.1.2', { pod: 'a' }), pod('y', 'b', '10.1.2.3', { pod: 'b' }, '192.0.2.12', [{ name: 'web', containerPort: 81 }])];
    const deny = trimPolicy({ metadata: { namespace: 'x', name: 'deny-eg' }, spec: { podSelector: {}, policyTypes: ['Egress'] } });
    const allow = trimPolicy({ metadata: { namespace: 'x', name: 'to-web' }, spec: { podSelector: {}, egress: [{ to: [{ namespaceSelector: {} }], ports: [{ port: 'web' }] }] } });
    assert.deepEqual(allow.types, { ingress: true, egress: true });
    const d = desiredPolicy(world([deny, allow], ps));
    assert.equal(d.plans.find((p) => p.key === 'x/deny-eg')?.ingressChain, undefined);
    assert.equal(chainOf(d, 'x/deny-eg', 'egressChain').length, 1);
    const eg = chainOf(d, 'x/to-web', 'egressChain');
    assert.deepEqual(setByRef(d, eg[1] ?? ''), ['10.1.2.3 . tcp . 81']);
    assert.deepEqual([...(d.content.sets.get(SET_ISO_EG)?.elements ?? [])], ['10.1.1.2']);
  });

  it('several policies add up: the address\'s group chain jumps to each, in name order, then counts a drop for each; then the deny', () => {
    const p1 = trimPolicy({ metadata: { namespace: 'x', name: 'b' }, spec: { podSelector: {} } });
    const p2 = trimPolicy({ metadata: { namespace: 'x', name: 'a' }, spec: { podSelector: {}, ingress: [{}] } });
    const d = desiredPolicy(world([p1, p2], pods));
    const base = (d.content.chains.get(CHAIN_IN)?.rules ?? []).map((r) => r.text);
    assert.deepEqual(base.slice(0, 2), ['meta nfproto != ipv4 accept', 'ct state established,related accept']);
    assert.deepEqual(base.slice(-2), ['ip daddr vmap @in-groups', 'jump pol-drop-in']);
    const el = [...(d.content.sets.get('in-groups')?.elements ?? [])].find((e) => e.startsWith('10.1.1.2 : '));
    const group = /jump (\S+)$/.exec(el ?? '')?.[1] ?? '';
    assert.deepEqual(d.content.chains.get(group)?.rules.map((r) => r.text), [`jump ${d.plans[0]?.ingressChain}`, `jump ${d.plans[1]?.ingressChain}`,
      `counter name ${d.plans[0]?.ingressCounter}`, `counter name ${d.plans[1]?.ingressCounter}`]);
    assert.equal(d.plans[0]?.key, 'x/a');
    assert.deepEqual(chainOf(d, 'x/a', 'ingressChain').slice(1), ['accept'], 'an empty rule allows everything');
  });

  it('rules stay O(policies): 1,000 more pods add set elements, not rules', () => {
    const pol = [trimPolicy({ metadata: { namespace: 'x', name: 'p' }, spec: { podSelector: {}, ingress: [{ from: [{ podSelector: { matchLabels: { pod: 'a' } } }], ports: [{ port: 80 }] }] } })];
    const many = [...pods];
    for (let i = 0; i < 1000; i++) many.push(pod('x', `m${i}`, `10.2.${i >> 7}.${(i & 127) + 1}`, { pod: i % 2 ? 'a' : 'b' }));
    const small = desiredPolicy(world(pol, pods));
    const big = desiredPolicy(world(pol, many));
    assert.equal(big.rules, small.rules);
    assert.equal(big.content.sets.size, small.content.sets.size);
    assert.equal(big.isolated.ingress, 1002);
  });

  it('equal selectors share one set; host-network and finished pods are left out', () => {
    assert.equal(trimPod({ metadata: { namespace: 'x', name: 'h' }, spec: { hostNetwork: true }, status: { podIP: '192.0.2.11' } }), undefined);
    assert.equal(trimPod({ metadata: { namespace: 'x', name: 'f' }, status: { podIP: '10.1.1.9', phase: 'Succeeded' } }), undefined);
    const a = trimPolicy({ metadata: { namespace: 'x', name: 'a' }, spec: { podSelector: { matchLabels: { pod: 'a' } }, ingress: [{ from: [{ podSelector: { matchLabels: { pod: 'a' } } }] }] } });
    const d = desiredPolicy(world([a], pods));
    const rules = chainOf(d, 'x/a', 'ingressChain');
    assert.equal(/@(s-\w+)/.exec(rules[0] ?? '')?.[1], /@(s-\w+)/.exec(rules[1] ?? '')?.[1]);
  });
});
