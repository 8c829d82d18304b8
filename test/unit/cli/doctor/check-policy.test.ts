import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkPolicy, type PolicyInputs } from '../../../../cli/doctor/check-policy.ts';
import type { Allocation } from '../../../../cli/doctor/allocations.ts';
import { desiredPolicy, SET_ISO_IN } from '../../../../agent/policy/desired.ts';
import { MAP_IN } from '../../../../agent/policy/groups.ts';
import { splitMapElement } from '../../../../lib/netfilter/map-elements.ts';
import { formatPolicyView, parsePolicyView } from '../../../../agent/policy/state.ts';
import { trimPod, trimPolicy } from '../../../../agent/policy/types.ts';
import type { TableContent } from '../../../../lib/netfilter/table-diff.ts';
import type { NftChainState, NftSetState, NftTableState } from '../../../../lib/netfilter/types.ts';

const pods = [
  trimPod({ metadata: { namespace: 'x', name: 'a', labels: { app: 'web' } }, status: { podIP: '10.244.1.2', hostIP: '192.0.2.11' } })!,
  trimPod({ metadata: { namespace: 'x', name: 'b', labels: { app: 'db' } }, status: { podIP: '10.244.1.3', hostIP: '192.0.2.11' } })!,
  trimPod({ metadata: { namespace: 'x', name: 'c', labels: { app: 'web' } }, status: { podIP: '10.244.2.2', hostIP: '192.0.2.12' } })!,
];
const desired = desiredPolicy({
  policies: [trimPolicy({ metadata: { namespace: 'x', name: 'web-only' }, spec: { podSelector: { matchLabels: { app: 'web' } }, ingress: [{ from: [{ podSelector: {} }] }] } })],
  pods, namespaces: new Map(), isLocal: (p) => p.hostIP === '192.0.2.11', nodeAddrs: ['10.244.1.1'],
});

/** What the kernel would list after applying `c` (rules carry a jump expression where they jump). */
function kernelOf(c: TableContent, drop: { set?: string; element?: string; chain?: string } = {}): NftTableState {
  const sets = new Map<string, NftSetState>();
  for (const [name, s] of c.sets) {
    const map = 'data' in s.spec;
    const elements = [...s.elements].filter((e) => !(name === drop.set && e === drop.element))
      .map((e) => (map ? { key: [splitMapElement(e).key], data: [splitMapElement(e).data ?? ''] } : { key: [e] }));
    sets.set(name, { name, kind: map ? 'map' : 'set', handle: 1, type: [], flags: [], elements });
  }
  const chains = new Map<string, NftChainState>();
  for (const [name, ch] of c.chains) {
    if (name === drop.chain) continue;
    chains.set(name, { name, handle: 1, rules: ch.rules.map((r, i) => ({ handle: i, comment: r.tag, expr: r.text.startsWith('jump ') ? [{ jump: { target: r.text.slice(5) } }] : [] })) });
  }
  return { family: 'inet', name: 'weft-policy', handle: 1, sets, chains };
}

const alloc = (ip: string, id: string): Allocation => ({ network: 'cbr0', ip, containerId: id, ifName: 'eth0', path: `/var/lib/cni/networks/cbr0/${ip}` });

function inputs(more: Partial<PolicyInputs> = {}): PolicyInputs {
  return {
    viewPath: '/run/flannel/network-policy.json', view: parsePolicyView(formatPolicyView('inet weft-policy', desired)), table: kernelOf(desired.content),
    allocs: [alloc('10.244.1.2', 'c-a'), alloc('10.244.1.3', 'c-b')], subnets: ['10.244.1.0/24'], ...more,
  };
}

void describe('doctor check policy', () => {
  it('the view round-trips and names this node\'s pods with the policies selecting them', () => {
    const v = parsePolicyView(formatPolicyView('inet weft-policy', desired));
    assert.deepEqual(v?.pods, [{ pod: 'x/a', ips: ['10.244.1.2'], ingress: ['x/web-only'], egress: [] }, { pod: 'x/b', ips: ['10.244.1.3'], ingress: [], egress: [] }]);
    assert.equal(parsePolicyView('{"version":2}'), null);
  });

  it('a node whose kernel matches the view is ok', () => {
    const r = checkPolicy(inputs());
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.facts, { policies: 1, podsHere: 2, podsSelected: 1 });
  });

  it('names the selected pod whose address is missing from the isolation set', () => {
    const r = checkPolicy(inputs({ table: kernelOf(desired.content, { set: SET_ISO_IN, element: '10.244.1.2' }) }));
    assert.equal(r.problems.length, 1);
    assert.match(r.problems[0]?.detail ?? '', /^pod x\/a is selected by x\/web-only but no rule covers it: 10\.244\.1\.2 is not in iso-ingress/);
  });

  it('names the pod when its policy chain is gone, or its address\'s group chain does not jump to it', () => {
    const chain = desired.plans[0]?.ingressChain ?? '';
    assert.match(checkPolicy(inputs({ table: kernelOf(desired.content, { chain }) })).problems[0]?.detail ?? '', new RegExp(`x/web-only's ingress chain ${chain} is missing`));
    const noJump = kernelOf(desired.content);
    const group = /jump (\S+)$/.exec([...(desired.content.sets.get(MAP_IN)?.elements ?? [])][0] ?? '')?.[1] ?? '';
    const g = noJump.chains.get(group)!;
    noJump.chains.set(group, { ...g, rules: g.rules.filter((r) => !JSON.stringify(r.expr).includes(chain)) });
    assert.match(checkPolicy(inputs({ table: noJump })).problems[0]?.detail ?? '', new RegExp(`nothing jumps to x/web-only's ingress chain ${chain} for 10\\.244\\.1\\.2 \\(group ${group}\\)`));
    const noElement = kernelOf(desired.content, { set: MAP_IN, element: [...(desired.content.sets.get(MAP_IN)?.elements ?? [])][0] ?? '' });
    assert.match(checkPolicy(inputs({ table: noElement })).problems[0]?.detail ?? '', /\(group none\)/);
  });

  it('names a selected pod whose API address no container here holds, and an allocation no pod claims', () => {
    const r = checkPolicy(inputs({ allocs: [alloc('10.244.1.9', 'c-real-a-0123456789'), alloc('10.244.1.3', 'c-b')] }));
    assert.equal(r.problems.length, 2);
    assert.match(r.problems[0]?.detail ?? '', /^pod x\/a .* its address 10\.244\.1\.2 \(Pod status\) is allocated to no container on this node/);
    assert.match(r.problems[1]?.detail ?? '', /^address 10\.244\.1\.9 \(container c-real-a-012\/eth0\) is allocated on this node but no Pod weftd knows has it/);
  });

  it('no view and no table: skipped; a table without a view, or a view without a table: a problem', () => {
    assert.match(checkPolicy(inputs({ view: null, table: null })).skipped ?? '', /without --network-policy/);
    assert.match(checkPolicy(inputs({ view: null })).problems[0]?.detail ?? '', /left no policy view/);
    assert.match(checkPolicy(inputs({ table: null })).problems[0]?.detail ?? '', /is missing: no pod is isolated/);
  });
});
