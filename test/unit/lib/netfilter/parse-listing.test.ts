// parseNftListing on JSON captured from nft 1.0.6 (`nft -j list table`).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseNftListing } from '../../../../lib/netfilter/parse-listing.ts';

const LISTING = JSON.stringify({
  nftables: [
    { metainfo: { version: '1.0.6', release_name: 'Lester Gooch #5', json_schema_version: 1 } },
    { table: { family: 'ip', name: 'weft', handle: 1 } },
    { set: { family: 'ip', name: 'masq4', table: 'weft', type: 'ipv4_addr', handle: 2, comment: 'pods', flags: ['interval'], elem: [{ elem: { val: '10.0.0.5', comment: 'ctr-abc' } }, { prefix: { addr: '10.1.0.0', len: 16 } }] } },
    { set: { family: 'ip', name: 'h4', table: 'weft', type: 'ipv4_addr', handle: 3, elem: ['10.0.0.1'] } },
    { map: { family: 'ip', name: 'pm', table: 'weft', type: ['inet_proto', 'inet_service'], handle: 4, map: 'ipv4_addr . inet_service', elem: [[{ elem: { val: { concat: ['tcp', 8080] }, comment: 'ctr1' } }, { concat: ['10.0.0.5', 80] }], [{ concat: ['udp', 53] }, { concat: ['10.0.0.6', 53] }]] } },
    { map: { family: 'ip', name: 'vm', table: 'weft', type: 'ipv4_addr', handle: 7, map: 'verdict', elem: [['10.0.0.7', { jump: { target: 'c-1' } }], ['10.0.0.8', { accept: null }]] } },
    { chain: { family: 'ip', table: 'weft', name: 'prerouting', handle: 5, type: 'nat', hook: 'prerouting', prio: -100, policy: 'accept' } },
    { rule: { family: 'ip', table: 'weft', chain: 'prerouting', handle: 6, comment: 'weft-portmap', expr: [{ dnat: { family: 'ip' } }] } },
    { rule: { family: 'ip', table: 'weft', chain: 'prerouting', handle: 8, expr: [] } },
  ],
});

describe('parseNftListing', () => {
  const t = parseNftListing(LISTING);
  it('reads the table', () => assert.deepEqual([t.family, t.name, t.handle], ['ip', 'weft', 1]));
  it('reads set elements with and without comments', () => {
    const s = t.sets.get('masq4');
    assert.deepEqual(s?.elements, [{ key: ['10.0.0.5'], comment: 'ctr-abc' }, { key: ['10.1.0.0/16'] }]);
    assert.deepEqual([s?.kind, s?.type, s?.flags, s?.comment], ['set', ['ipv4_addr'], ['interval'], 'pods']);
    assert.deepEqual(t.sets.get('h4')?.elements, [{ key: ['10.0.0.1'] }]);
  });
  it('reads concatenated map elements and their data', () => {
    const m = t.sets.get('pm');
    assert.equal(m?.kind, 'map');
    assert.equal(m?.dataType, 'ipv4_addr . inet_service');
    assert.deepEqual(m?.elements, [
      { key: ['tcp', 8080], data: ['10.0.0.5', 80], comment: 'ctr1' },
      { key: ['udp', 53], data: ['10.0.0.6', 53] },
    ]);
  });
  it('renders verdict data as text', () => {
    assert.deepEqual(t.sets.get('vm')?.elements.map((e) => e.data), [['jump c-1'], ['accept']]);
  });
  it('groups rules under chains with handles and tags', () => {
    const c = t.chains.get('prerouting');
    assert.deepEqual([c?.hook, c?.prio, c?.policy], ['prerouting', -100, 'accept']);
    assert.deepEqual(c?.rules.map((r) => [r.handle, r.comment]), [[6, 'weft-portmap'], [8, undefined]]);
  });
  it('takes family and table from a `list set` output', () => {
    const s = parseNftListing(JSON.stringify({ nftables: [{ metainfo: {} }, { set: { family: 'inet', name: 'x-1', table: 'weft', type: 'ipv4_addr', handle: 2 } }] }));
    assert.deepEqual([s.family, s.name, s.sets.get('x-1')?.elements], ['inet', 'weft', []]);
  });
  it('refuses non-JSON', () => assert.throws(() => parseNftListing('table ip weft {')));
});
