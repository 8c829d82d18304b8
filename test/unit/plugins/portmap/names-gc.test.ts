// Element comments (owner + network tag) and GC's choice of stale elements.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NftSetState, NftTableState } from '../../../../lib/netfilter/types.ts';
import { findStaleElements } from '../../../../plugins/portmap/gc.ts';
import { elementComment, networkTag } from '../../../../plugins/portmap/names.ts';

describe('elementComment', () => {
  it('is <network hash>:<containerID>/<ifname>, hashed past what nft accepts', () => {
    const c = elementComment('net1', 'abc123', 'eth0');
    assert.match(c, /^[0-9a-f]{8}:abc123\/eth0$/);
    assert.ok(c.startsWith(networkTag('net1')));
    assert.notEqual(networkTag('net1'), networkTag('net2'));
    const long = elementComment('net1', 'x'.repeat(200), 'eth0');
    assert.match(long, /^[0-9a-f]{8}:h:[0-9a-f]{8}$/);
    assert.equal(long, elementComment('net1', 'x'.repeat(200), 'eth0'), 'stable');
    assert.match(elementComment('net1', 'id with "quotes"', 'eth0'), /^[0-9a-f]{8}:h:/);
  });
});

describe('findStaleElements', () => {
  const el = (comment: string, port: number) => ({ key: ['tcp', port], data: ['10.0.0.5', 80], comment });
  const set: NftSetState = {
    name: 'portmap-dnat4', kind: 'map', handle: 1, type: [], flags: [],
    elements: [el(elementComment('net1', 'alive', 'eth0'), 1), el(elementComment('net1', 'gone', 'eth0'), 2), el(elementComment('net2', 'gone', 'eth0'), 3), el('unrelated', 4)],
  };
  const state: NftTableState = { family: 'inet', name: 'weft', handle: 1, sets: new Map([[set.name, set]]), chains: new Map() };

  it("removes only this network's elements whose attachment is not valid", () => {
    const stale = findStaleElements(state, 'net1', [{ containerId: 'alive', ifName: 'eth0' }]);
    assert.deepEqual(stale.map((e) => e.key[1]), [2]);
    assert.deepEqual(findStaleElements(state, 'net1', []).map((e) => e.key[1]), [1, 2]);
    assert.deepEqual(findStaleElements(null, 'net1', []), []);
  });
});
