import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attrNested, attrStr, concat, formatAttr } from '../../../../lib/netlink/attrs.ts';
import { parseBaseChain, parseRuleComment } from '../../../../lib/netfilter/nfnl/chains.ts';

const be32 = (type: number, v: number): Uint8Array => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setInt32(0, v, false);
  return formatAttr(type, b);
};
const nfgen = (family: number): Uint8Array => new Uint8Array([family, 0, 0, 0]);

describe('nf_tables chain and rule listings', () => {
  it('parses a base chain: family, table, name, type, hook, signed priority, drop policy', () => {
    const payload = concat([nfgen(2), attrStr(1, 'filter'), attrStr(3, 'FORWARD'), attrNested(4, [be32(1, 2), be32(2, -150)]), be32(5, 0), attrStr(7, 'filter')]);
    assert.deepEqual(parseBaseChain(payload), { family: 'ip', table: 'filter', name: 'FORWARD', type: 'filter', hook: 'forward', priority: -150, policy: 'drop' });
  });

  it('a regular chain (no hook) or an unknown family is not a base chain', () => {
    assert.equal(parseBaseChain(concat([nfgen(1), attrStr(1, 't'), attrStr(3, 'c')])), null);
    assert.equal(parseBaseChain(concat([nfgen(99), attrStr(1, 't'), attrStr(3, 'c'), attrNested(4, [be32(1, 2), be32(2, 0)])])), null);
  });

  it('a base chain without a policy attribute accepts', () => {
    const payload = concat([nfgen(1), attrStr(1, 'fw'), attrStr(3, 'fwd'), attrNested(4, [be32(1, 2), be32(2, 0)])]);
    assert.equal(parseBaseChain(payload)?.policy, 'accept');
    assert.equal(parseBaseChain(payload)?.family, 'inet');
  });

  it('reads a rule comment from its user data (type 0, NUL-terminated) and the 64-bit handle', () => {
    const handle = new Uint8Array(8);
    new DataView(handle.buffer).setBigUint64(0, 7n, false);
    const udata = new Uint8Array([0, 14, ...Buffer.from('weft-firewall'), 0]);
    const r = parseRuleComment(concat([nfgen(2), attrStr(1, 'filter'), attrStr(2, 'FORWARD'), formatAttr(3, handle), formatAttr(7, udata)]));
    assert.deepEqual(r, { handle: 7n, comment: 'weft-firewall' });
    assert.deepEqual(parseRuleComment(concat([nfgen(2), formatAttr(3, handle)])), { handle: 7n });
  });
});
