// Pure functions over a listed table: clashes (ADD), owned elements and UDP flows (DEL), problems (CHECK).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NftSetState, NftTableState } from '../../../../lib/netfilter/types.ts';
import { findProblems } from '../../../../plugins/portmap/check.ts';
import { findClashes, formatClashes } from '../../../../plugins/portmap/conflict.ts';
import { findOwnedElements, udpPodIpsOf } from '../../../../plugins/portmap/del.ts';
import type { PlannedElement } from '../../../../plugins/portmap/plan.ts';
import { portmapRules } from '../../../../plugins/portmap/ruleset.ts';

function set(name: string, elements: NftSetState['elements'], kind: 'set' | 'map' = 'map'): NftSetState {
  return { name, kind, handle: 1, type: [], flags: [], elements };
}

function table(sets: NftSetState[], withRules = true): NftTableState {
  const chains = new Map<string, { name: string; handle: number; rules: { handle: number; expr: unknown[] }[] }>();
  if (withRules) {
    for (const r of portmapRules()) {
      const c = chains.get(r.chain) ?? { name: r.chain, handle: 1, rules: [] };
      c.rules.push({ handle: c.rules.length + 10, expr: [] });
      chains.set(r.chain, c);
    }
  }
  return { family: 'inet', name: 'weft', handle: 1, sets: new Map(sets.map((s) => [s.name, s])), chains };
}

const STATE = table([
  set('portmap-dnat4', [
    { key: ['tcp', 8080], data: ['10.244.0.5', 80], comment: 'ctr-a/eth0' },
    { key: ['udp', 5353], data: ['10.244.0.5', 53], comment: 'ctr-a/eth0' },
    { key: ['tcp', 9090], data: ['10.244.0.6', 80], comment: 'ctr-b/eth0' },
  ]),
  set('portmap-hostip6', [{ key: ['fd00::1', 'udp', 53], data: ['fd00:244::5', 53], comment: 'ctr-a/eth0' }]),
  set('portmap-snat4', [{ key: ['10.244.0.0/24', '10.244.0.5', 'tcp', 80], comment: 'ctr-a/eth0' }], 'set'),
  set('bridge-pods4-x', [{ key: ['10.244.0.5'], comment: 'ctr-a/eth0' }], 'set'),
]);

const mine: PlannedElement = { set: 'portmap-dnat4', key: ['tcp', 8080], data: ['10.244.0.5', 80], mapping: { hostPort: 8080, containerPort: 80, protocol: 'tcp' } };

describe('findClashes / formatClashes', () => {
  it('same key with other data is a clash naming the owner; same data is not', () => {
    const theirs: PlannedElement = { ...mine, key: ['tcp', 9090], data: ['10.244.0.7', 80], mapping: { hostPort: 9090, containerPort: 80, protocol: 'tcp' } };
    const clashes = findClashes(STATE, [mine, theirs, { set: 'portmap-snat4', key: ['x'] }]);
    assert.equal(clashes.length, 1);
    assert.equal(formatClashes(clashes), 'tcp hostPort 9090 (any address) is already mapped to 10.244.0.6:80 by ctr-b/eth0');
    assert.deepEqual(findClashes(null, [mine]), []);
  });
});

describe('findOwnedElements / udpPodIpsOf', () => {
  it('selects this attachment by comment in portmap sets only (never bridge sets)', () => {
    const owned = findOwnedElements(STATE, 'ctr-a/eth0');
    assert.deepEqual(owned.map((e) => e.set), ['portmap-dnat4', 'portmap-dnat4', 'portmap-hostip6', 'portmap-snat4']);
    assert.deepEqual(findOwnedElements(STATE, 'ctr-z/eth0'), []);
    assert.deepEqual(findOwnedElements(null, 'ctr-a/eth0'), []);
  });

  it('adds prevResult-planned DNAT entries still pointing at the pod under an older owner', () => {
    const stale: PlannedElement = { set: 'portmap-dnat4', key: ['tcp', 9090], data: ['10.244.0.6', 80] };
    const moved: PlannedElement = { set: 'portmap-dnat4', key: ['tcp', 9090], data: ['10.244.0.9', 80] };
    assert.equal(findOwnedElements(STATE, 'ctr-new/eth0', [stale]).length, 1);
    assert.equal(findOwnedElements(STATE, 'ctr-new/eth0', [moved]).length, 0, 'another pod now owns the key');
  });

  it('UDP flows to flush: the pod addresses of removed UDP DNAT entries, once each', () => {
    assert.deepEqual(udpPodIpsOf(findOwnedElements(STATE, 'ctr-a/eth0')), ['10.244.0.5', 'fd00:244::5']);
    assert.deepEqual(udpPodIpsOf(findOwnedElements(STATE, 'ctr-b/eth0')), [], 'TCP only: nothing to flush');
  });
});

describe('findProblems (CHECK)', () => {
  it('healthy: nothing to report', () => {
    assert.deepEqual(findProblems(STATE, [mine], 'ctr-a/eth0'), []);
  });
  it('missing table, chain rules, elements, or an entry pointing elsewhere are reported', () => {
    assert.deepEqual(findProblems(null, [mine], 'ctr-a/eth0'), ['table inet weft is missing']);
    const noRules = findProblems(table([...STATE.sets.values()], false), [mine], 'ctr-a/eth0');
    assert.equal(noRules.length, 4);
    assert.match(findProblems(STATE, [{ ...mine, key: ['tcp', 1] }], 'ctr-a/eth0')[0] ?? '', /portmap-dnat4 \{ tcp \. 1 \} is missing/);
    assert.match(findProblems(STATE, [{ ...mine, data: ['10.244.0.9', 80] }], 'ctr-a/eth0')[0] ?? '', /maps to 10\.244\.0\.5 \. 80/);
    assert.match(findProblems(STATE, [mine], 'ctr-b/eth0')[0] ?? '', /belongs to ctr-a\/eth0/);
  });
});
