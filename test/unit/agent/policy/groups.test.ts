// The group verdict maps (agent/policy/groups.ts through desiredPolicy): each isolated local address
// maps to the chain of exactly the policies that select it, addresses with the same policies share
// a chain, and the base chains hold one lookup, not a jump per policy.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHAIN_EG, CHAIN_IN, desiredPolicy, type DesiredPolicy, type PolicyWorld } from '../../../../agent/policy/desired.ts';
import { MAP_EG, MAP_IN, MAP_IN6 } from '../../../../agent/policy/groups.ts';
import { trimPod, trimPolicy, type PodInfo, type Policy } from '../../../../agent/policy/types.ts';

function pod(ns: string, name: string, ips: string[], labels: Record<string, string>, host = '192.0.2.11'): PodInfo {
  const p = trimPod({ metadata: { namespace: ns, name, labels }, status: { podIPs: ips.map((ip) => ({ ip })), hostIP: host, phase: 'Running' } });
  assert.ok(p);
  return p;
}

function policy(ns: string, name: string, sel: Record<string, string>, egress = false): Policy {
  return trimPolicy({ metadata: { namespace: ns, name }, spec: { podSelector: { matchLabels: sel }, ingress: [{ from: [{ podSelector: {} }] }], ...(egress ? { policyTypes: ['Ingress', 'Egress'], egress: [{}] } : {}) } });
}

function world(policies: Policy[], pods: PodInfo[]): PolicyWorld {
  return { policies, pods, namespaces: new Map(), isLocal: (p) => p.hostIP === '192.0.2.11', nodeAddrs: ['10.1.1.1'] };
}

/** The group chain `ip` maps to in `map`, undefined when it has no element. */
function groupOf(d: DesiredPolicy, map: string, ip: string): string | undefined {
  const el = [...(d.content.sets.get(map)?.elements ?? [])].find((e) => e.startsWith(`${ip} : `));
  return el === undefined ? undefined : /^\S+ : jump (\S+)$/.exec(el)?.[1];
}

/** The policies (namespace/name) a group chain jumps to, in order. */
function membersOf(d: DesiredPolicy, chain: string | undefined): string[] {
  const byChain = new Map(d.plans.flatMap((p) => [[p.ingressChain, p.key], [p.egressChain, p.key]] as const));
  return (d.content.chains.get(chain ?? '')?.rules ?? []).filter((r) => !r.text.startsWith('counter ')).map((r) => byChain.get(/^jump (\S+)$/.exec(r.text)?.[1]) ?? `? ${r.text}`);
}

const pods = [
  pod('x', 'web1', ['10.1.1.2'], { app: 'web' }), pod('x', 'web2', ['10.1.1.3'], { app: 'web' }),
  pod('x', 'db', ['10.1.1.4'], { app: 'db' }), pod('x', 'free', ['10.1.1.5'], { app: 'none' }),
  pod('y', 'web', ['10.1.1.6'], { app: 'web' }), pod('x', 'far', ['10.1.2.2'], { app: 'web' }, '192.0.2.12'),
];
const policies = [policy('x', 'all', {}), policy('x', 'web', { app: 'web' }), policy('x', 'db', { app: 'db' }), policy('y', 'web', { app: 'web' })];

void describe('group verdict maps', () => {
  it('pods selected by different policy sets get different groups; the same set shares one chain', () => {
    const d = desiredPolicy(world(policies, pods));
    const [w1, w2, db, free] = ['10.1.1.2', '10.1.1.3', '10.1.1.4', '10.1.1.5'].map((ip) => groupOf(d, MAP_IN, ip));
    assert.ok(w1 !== undefined && db !== undefined && free !== undefined);
    assert.equal(w1, w2, 'two web pods of x share a chain');
    assert.notEqual(w1, db);
    assert.deepEqual(membersOf(d, w1), ['x/all', 'x/web']);
    assert.deepEqual(membersOf(d, db), ['x/all', 'x/db']);
    assert.deepEqual(membersOf(d, free), ['x/all']);
    // y's web pod: only y's policy, none of x's is walked for it.
    assert.deepEqual(membersOf(d, groupOf(d, MAP_IN, '10.1.1.6')), ['y/web']);
    assert.equal(groupOf(d, MAP_IN, '10.1.2.2'), undefined, 'a pod of another node has no element');
    assert.equal([...d.content.chains.keys()].filter((n) => n.startsWith('gi-')).length, 4);
  });

  it('a pod no policy selects has no element; with no policy at all the maps are empty', () => {
    const d = desiredPolicy(world([policy('x', 'web', { app: 'web' })], pods));
    assert.equal(groupOf(d, MAP_IN, '10.1.1.4'), undefined);
    assert.equal(groupOf(d, MAP_IN, '10.1.1.5'), undefined);
    assert.equal(desiredPolicy(world([], pods)).content.sets.get(MAP_IN)?.elements.size, 0);
  });

  it('the base chains hold one lookup and no jump to a policy, however many policies there are', () => {
    const many = Array.from({ length: 50 }, (_, i) => policy('x', `p${String(i).padStart(2, '0')}`, { app: 'web' }, true));
    const d = desiredPolicy(world(many, pods));
    for (const [base, map] of [[CHAIN_IN, MAP_IN], [CHAIN_EG, MAP_EG]] as const) {
      const rules = (d.content.chains.get(base)?.rules ?? []).map((r) => r.text);
      assert.deepEqual(rules.filter((t) => t.startsWith('jump ')), [base === CHAIN_IN ? 'jump pol-drop-in' : 'jump pol-drop-eg']);
      assert.equal(rules.filter((t) => t.includes(`vmap @${map}`)).length, 1);
    }
    const g = groupOf(d, MAP_EG, '10.1.1.2');
    assert.equal(membersOf(d, g).length, 50);
    assert.equal(groupOf(d, MAP_EG, '10.1.1.4'), undefined, 'the db pod is selected by none of them');
  });

  it('1,000 more pods with the same policies add map elements, not chains', () => {
    const more = [...pods];
    for (let i = 0; i < 1000; i++) more.push(pod('x', `m${i}`, [`10.1.${10 + (i >> 7)}.${(i & 127) + 1}`], { app: i % 2 === 0 ? 'web' : 'db' }));
    const small = desiredPolicy(world(policies, pods));
    const big = desiredPolicy(world(policies, more));
    assert.equal(big.rules, small.rules);
    assert.equal(big.content.chains.size, small.content.chains.size);
    assert.equal(big.content.sets.get(MAP_IN)?.elements.size, (small.content.sets.get(MAP_IN)?.elements.size ?? 0) + 1000);
  });

  it('an IPv6 address goes to the IPv6 map, to the same group chain as its IPv4 twin', () => {
    const d = desiredPolicy(world(policies, [...pods, pod('x', 'dual', ['10.1.1.9', 'fd00::9'], { app: 'db' })]));
    assert.equal(groupOf(d, MAP_IN6, 'fd00::9'), groupOf(d, MAP_IN, '10.1.1.9'));
    assert.ok((d.content.chains.get(CHAIN_IN)?.rules ?? []).some((r) => r.text === `ip6 daddr vmap @${MAP_IN6}`));
  });

  it('a label change into an existing group changes one element, and no chain', () => {
    const d1 = desiredPolicy(world(policies, pods));
    const moved = pods.map((p) => (p.name === 'db' ? pod('x', 'db', ['10.1.1.4'], { app: 'web' }) : p));
    const d2 = desiredPolicy(world(policies, moved));
    assert.deepEqual([...d2.content.chains.keys()].filter((n) => !d1.content.chains.has(n)), []);
    assert.equal(groupOf(d2, MAP_IN, '10.1.1.4'), groupOf(d1, MAP_IN, '10.1.1.2'));
  });

  it('a group chain counts the drops of exactly its members after their jumps; the drop chains count only the total', () => {
    const d = desiredPolicy(world(policies, pods));
    const byCounter = new Map(d.plans.map((p) => [p.ingressCounter, p.key] as const));
    for (const ip of ['10.1.1.2', '10.1.1.4']) {
      const g = groupOf(d, MAP_IN, ip);
      const rules = (d.content.chains.get(g ?? '')?.rules ?? []).map((r) => r.text);
      const counts = rules.filter((t) => t.startsWith('counter name '));
      assert.deepEqual(counts.map((t) => byCounter.get(t.slice('counter name '.length))), membersOf(d, g), `${ip}: one counter per member, in order`);
      assert.ok(rules.findIndex((t) => t.startsWith('counter ')) > rules.findLastIndex((t) => t.startsWith('jump ')), 'counted only once every member declined');
    }
    assert.deepEqual((d.content.chains.get('pol-drop-in')?.rules ?? []).map((r) => r.text), ['counter name drops-in drop']);
    assert.deepEqual((d.content.chains.get('pol-drop-eg')?.rules ?? []).map((r) => r.text), ['counter name drops-eg drop']);
  });
});
