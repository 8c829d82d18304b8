// agent/services/kernel.ts: a listing walked element by element gives what parsing the whole JSON
// gives (the reference below parses the tree at once), compact or indented as nft may print it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { formatJsonValue, noteSlotElement, parseSvcListing } from '../../../../agent/services/kernel.ts';
import { AFFINITY_MAP, emptyContent, type FixedMapName, type KernelContent } from '../../../../agent/services/content.ts';
import { isSharedMap } from '../../../../agent/services/slots.ts';

type J = Record<string, unknown>;

/** The whole tree at once: the reference the walk must equal. */
function reference(json: string): KernelContent {
  const out: KernelContent = { chains: new Map(), elements: emptyContent().elements, affinity: new Map(), epMaps: new Map(), allChains: new Set() };
  for (const it of (JSON.parse(json) as { nftables: J[] }).nftables) {
    const set = (it.map ?? it.set) as J | undefined;
    if (set !== undefined) {
      const name = String(set.name);
      const pairs = ((set.elem as unknown[] | undefined) ?? []).map((e) => (Array.isArray(e) ? [formatJsonValue(e[0]), formatJsonValue(e[1])] : [formatJsonValue(e), '']) as [string, string]);
      if (out.elements.has(name as FixedMapName)) out.elements.set(name as FixedMapName, new Map(pairs));
      else if (name === AFFINITY_MAP) {
        for (const [k, v] of pairs) {
          const key = k.slice(k.indexOf(' . ') + 3);
          const g = out.affinity.get(key) ?? { clients: new Map<string, string>() };
          out.affinity.set(key, g);
          g.clients.set(k, v);
        }
      } else if (isSharedMap(name)) for (const [k, v] of pairs) noteSlotElement(out.epMaps, name, k, v);
    } else if (it.chain !== undefined) out.allChains.add(String((it.chain as J).name));
    else if (it.rule !== undefined) {
      const r = it.rule as J;
      if (!out.chains.has(String(r.chain))) out.chains.set(String(r.chain), typeof r.comment === 'string' ? r.comment : '');
    }
  }
  for (const n of out.allChains) if (!out.chains.has(n)) out.chains.set(n, '');
  return out;
}

const fixture = readFileSync(new URL('./listing.fixture.json', import.meta.url), 'utf8');

void describe('parseSvcListing', () => {
  it('equals the whole-tree parse of the fixture listing', () => {
    const got = parseSvcListing(fixture);
    assert.deepEqual(got, reference(fixture));
    assert.ok((got.elements.get('hairpin4')?.size ?? 0) > 0 && got.epMaps.size > 0 && got.chains.size > 0, 'the fixture has elements, slots and chains');
  });

  it('reads the same listing printed with whitespace', () => {
    const indented = JSON.stringify(JSON.parse(fixture), null, 2);
    assert.deepEqual(parseSvcListing(indented), reference(fixture));
  });

  it('keeps pinned clients grouped by affinity key, and empty maps as empty', () => {
    const t = JSON.stringify({ nftables: [{ map: { name: 'svc4', elem: [] } }, { map: { name: AFFINITY_MAP, elem: [[{ concat: ['192.0.2.1', '10.96.0.1', 'tcp', 80] }, { concat: ['10.244.0.5', 8080] }]] } }] });
    const got = parseSvcListing(t);
    assert.deepEqual([...(got.affinity.get('10.96.0.1 . tcp . 80')?.clients ?? [])], [['192.0.2.1 . 10.96.0.1 . tcp . 80', '10.244.0.5 . 8080']]);
    assert.equal(got.elements.get('svc4')?.size, 0);
  });
});
