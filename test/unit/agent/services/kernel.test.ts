// agent/services/kernel.ts: a listing walked element by element gives what parsing the whole JSON
// gives (the reference below parses the tree at once), compact or indented as nft may print it; a
// terse listing plus each set's elements as the kernel's bytes gives the same.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { formatJsonValue, formatListedElem, noteListedElem, noteSlotElement, parseSvcListing, type ListedSet } from '../../../../agent/services/kernel.ts';
import { formatKeyBytes } from '../../../../lib/netfilter/nfnl/key-codec.ts';
import type { NfnlListedElem } from '../../../../lib/netfilter/nfnl/elem.ts';
import type { NftAtom, NftDataType } from '../../../../lib/netfilter/types.ts';
import { AFFINITY_MAP, emptyContent, type FixedMapName, type KernelContent } from '../../../../agent/services/content.ts';
import { isSharedMap } from '../../../../agent/services/slots.ts';
import { plainKernelContent } from '../../../../testkit/kernel-content.ts';

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
    assert.deepEqual(plainKernelContent(got), plainKernelContent(reference(fixture)));
    assert.ok((got.elements.get('hairpin4')?.size ?? 0) > 0 && got.epMaps.size > 0 && got.chains.size > 0, 'the fixture has elements, slots and chains');
  });

  it('reads the same listing printed with whitespace', () => {
    const indented = JSON.stringify(JSON.parse(fixture), null, 2);
    assert.deepEqual(plainKernelContent(parseSvcListing(indented)), plainKernelContent(reference(fixture)));
  });

  it('keeps pinned clients grouped by affinity key, and empty maps as empty', () => {
    const t = JSON.stringify({ nftables: [{ map: { name: 'svc4', elem: [] } }, { map: { name: AFFINITY_MAP, elem: [[{ concat: ['192.0.2.1', '10.96.0.1', 'tcp', 80] }, { concat: ['10.244.0.5', 8080] }]] } }] });
    const got = parseSvcListing(t);
    assert.deepEqual([...(got.affinity.get('10.96.0.1 . tcp . 80')?.clients ?? [])], [['192.0.2.1 . 10.96.0.1 . tcp . 80', '10.244.0.5 . 8080']]);
    assert.equal(got.elements.get('svc4')?.size, 0);
  });
});

/** A JSON element part as key-codec atoms (a concatenation's parts, or the one value). */
function atoms(v: unknown): NftAtom[] {
  if (v !== null && typeof v === 'object' && 'concat' in v) return (v as { concat: NftAtom[] }).concat;
  return [v as NftAtom];
}

/** The codec's type for a listing's type name (the endpoint maps' `integer` slot is 32 bits in host order, as `mark`). */
const codecType = (t: string) => (t === 'integer' ? 'mark' : t) as Exclude<NftDataType, 'verdict'>;

/** A JSON listing's element as the kernel's dump gives it: key bytes, and data bytes or a verdict. */
function asKernelElem(set: ListedSet, el: unknown): NfnlListedElem {
  const [k, v] = Array.isArray(el) ? el : [el, undefined];
  const key = formatKeyBytes(set.key.map(codecType), atoms(k));
  if (v === undefined) return { key, flags: 0 };
  const goto = (v as { goto?: { target: string } }).goto;
  if (goto !== undefined) return { key, flags: 0, data: { verdict: 'goto', chain: goto.target } };
  return { key, flags: 0, data: formatKeyBytes(set.data.map(codecType), atoms(v)) };
}

void describe('a terse listing and netlink elements', () => {
  const full = (JSON.parse(fixture) as { nftables: J[] }).nftables;
  // What `nft -j -t` prints: the fixture without its elements.
  const terse = JSON.stringify({
    nftables: full.map((it) => {
      const kind = it.map !== undefined ? 'map' : it.set !== undefined ? 'set' : undefined;
      if (kind === undefined) return it;
      const rest = { ...(it[kind] as J) };
      delete rest.elem;
      return { [kind]: rest };
    }),
  });
  const elemsOf = (name: string) => (full.map((it) => (it.map ?? it.set) as J | undefined).find((s) => s?.name === name)?.elem as unknown[] | undefined) ?? [];

  it('lists every kept set with its key and data types, and no others', () => {
    const sets: ListedSet[] = [];
    parseSvcListing(terse, sets);
    assert.deepEqual(sets.find((s) => s.name === 'svc6'), { name: 'svc6', key: ['ipv6_addr', 'inet_proto', 'inet_service'], data: ['verdict'] });
    assert.deepEqual(sets.find((s) => s.name === 'epn4t'), { name: 'epn4t', key: ['inet_service', 'integer'], data: ['ipv4_addr', 'inet_service'] });
    assert.deepEqual(sets.find((s) => s.name === 'hairpin4'), { name: 'hairpin4', key: ['ipv4_addr', 'ipv4_addr'], data: [] });
    assert.equal(sets.length, full.filter((it) => it.map !== undefined || it.set !== undefined).length);
  });

  it('formats each element as the JSON listing does (verdicts, concatenations, IPv6, slots)', () => {
    const sets: ListedSet[] = [];
    parseSvcListing(terse, sets);
    let n = 0;
    for (const set of sets) {
      for (const el of elemsOf(set.name)) {
        const want = Array.isArray(el) ? [formatJsonValue(el[0]), formatJsonValue(el[1])] : [formatJsonValue(el), ''];
        assert.deepEqual(formatListedElem(set, asKernelElem(set, el)), want, set.name);
        n++;
      }
    }
    assert.ok(n > 40, `the fixture's elements were all compared (${n})`);
  });

  it('gives the content of the full listing', () => {
    const sets: ListedSet[] = [];
    const got = parseSvcListing(terse, sets);
    for (const set of sets) for (const el of elemsOf(set.name)) noteListedElem(got, set, asKernelElem(set, el));
    assert.deepEqual(plainKernelContent(got), plainKernelContent(reference(fixture)));
  });

  it('refuses a type it cannot read, naming the set', () => {
    const set: ListedSet = { name: 'odd', key: ['ipv4_addr', 'ct_state'], data: [] };
    assert.throws(() => formatListedElem(set, { key: new Uint8Array(8), flags: 0 }), /set odd has a type weftd does not read \(ct_state\)/);
  });
});
