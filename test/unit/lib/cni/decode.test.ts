// Go-style key decoding (lib/cni/decode.ts). Expected values are what Go 1.26's encoding/json gives
// for the same documents into the equivalent structs (checked with a small Go program).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldFor, fieldTreeOf, foldKey, goTypeError, normalizeKeys } from '../../../../lib/cni/decode.ts';
import { CniError } from '../../../../lib/cni/errors.ts';
import { validateConfig } from '../../../../lib/cni/validate.ts';
import { validate as bridgeValidate } from '../../../../gen/validators/bridge.js';
import type { FieldTree } from '../../../../lib/cni/decode.ts';
import { portmapSchema } from '../../../../plugins/portmap/schema.ts';
import { hostLocalSchema } from '../../../../ipam/host-local/schema.ts';

const entry: FieldTree = { p: { hostPort: {}, containerPort: {} } };
const tree: FieldTree = { p: { x: entry, l: { i: entry }, m: { m: entry }, s: {}, n: {} } };
const decode = (doc: unknown): unknown => normalizeKeys(doc, tree);

describe('normalizeKeys (Go encoding/json semantics)', () => {
  it('matches keys case-insensitively to the schema spelling', () => {
    assert.deepStrictEqual(decode({ X: { HostPort: 5, CONTAINERPORT: 6 } }), { x: { hostPort: 5, containerPort: 6 } });
  });

  it('a later key for the same field overrides an earlier one, whatever the spelling', () => {
    assert.deepStrictEqual(normalizeKeys({ hostport: 1, HostPort: 2, HOSTPORT: 3 }, entry), { hostPort: 3 });
    assert.deepStrictEqual(normalizeKeys({ HostPort: 2, hostPort: 1 }, entry), { hostPort: 1 });
  });

  it('objects for the same struct field merge; array elements merge index by index then truncate', () => {
    assert.deepStrictEqual(decode({ x: { hostPort: 1 }, X: { containerPort: 2 } }), { x: { hostPort: 1, containerPort: 2 } });
    assert.deepStrictEqual(decode({ x: { hostPort: 1 }, X: { HOSTPORT: 3 } }), { x: { hostPort: 3 } });
    assert.deepStrictEqual(decode({ l: [{ hostPort: 1, containerPort: 9 }, { hostPort: 7 }], L: [{ hostPort: 2 }] }), { l: [{ hostPort: 2, containerPort: 9 }] });
  });

  it('map keys are data: kept as spelled, values decoded afresh', () => {
    assert.deepStrictEqual(decode({ m: { a: { hostPort: 1, containerPort: 9 } }, M: { a: { HostPort: 2 }, B: {} } }), { m: { a: { hostPort: 2 }, B: {} } });
  });

  it('null keeps what the field had; unknown keys stay untouched; wrong types are left for the schema', () => {
    assert.deepStrictEqual(decode({ s: 'a', S: null }), { s: 'a' });
    assert.deepStrictEqual(decode({ n: null, Other: { HostPort: 1 } }), { Other: { HostPort: 1 } });
    assert.deepStrictEqual(decode({ x: [], l: 'no', N: '1' }), { x: [], l: 'no', n: '1' });
  });

  it('folds like Go: KELVIN SIGN and LONG S match k and s, other non-ASCII never matches', () => {
    assert.equal(foldKey('\u212a\u017fX'), 'ksx');
    for (const k of ['', 'cniVersion', 'ABC', 'abc', 'aZ@[`{', 'Ä\u212aÖ\u017fÜ', 'İıK', 'x\u212a', '\u017f', 'éÉ_-.9']) {
      const want = k.replace(/[A-Z\u212a\u017f]/g, (c) => (c === '\u212a' ? 'k' : c === '\u017f' ? 's' : c.toLowerCase()));
      assert.equal(foldKey(k), want, JSON.stringify(k));
    }
    assert.deepStrictEqual(normalizeKeys({ '\u212a': 7, '\u017f': 8, 'İ': 1 }, { p: { k: {}, s: {}, i: {} } }), { k: 7, s: 8, 'İ': 1 });
  });

  it('exact spelling wins between fold-equal fields, else the first in schema order', () => {
    const f = { Name: {}, name: {} };
    assert.equal(fieldFor(f, 'name'), 'name');
    assert.equal(fieldFor(f, 'Name'), 'Name');
    assert.equal(fieldFor(f, 'NAME'), 'Name');
  });

  it('does not let "__proto__" change the prototype', () => {
    const out = normalizeKeys(JSON.parse('{"__proto__": {"polluted": 1}, "S": "x"}'), tree) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.equal((out as { polluted?: unknown }).polluted, undefined);
    assert.equal(out['s'], 'x');
  });
});

describe('fieldTreeOf on the plugin schemas', () => {
  it('containerd 1.6 portMappings and ipRanges decode to the spec spelling', () => {
    const pm = normalizeKeys({ RuntimeConfig: { PortMappings: [{ HostPort: 8080, ContainerPort: 80, Protocol: 'tcp', HostIP: '' }] } }, fieldTreeOf(portmapSchema));
    assert.deepStrictEqual(pm, { runtimeConfig: { portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp', hostIP: '' }] } });
    const hl = normalizeKeys({ runtimeConfig: { IPRanges: [[{ Subnet: '10.1.0.0/16', Gateway: '10.1.0.1' }]] }, IPAM: { Type: 'host-local', DataDir: '/x' } }, fieldTreeOf(hostLocalSchema));
    assert.deepStrictEqual(hl, { runtimeConfig: { ipRanges: [[{ subnet: '10.1.0.0/16', gateway: '10.1.0.1' }]] }, ipam: { type: 'host-local', dataDir: '/x' } });
  });
});

describe('validateConfig with Go decoding (generated bridge validator)', () => {
  const base = '"cniVersion":"1.0.0","name":"n","type":"bridge","ipam":{"type":"host-local"}';
  const check = (text: string): unknown => validateConfig<Record<string, unknown>>(bridgeValidate, JSON.parse(`{${base},${text}}`));
  it('a later key wins, but a wrong type under an overridden key is still refused (as Go reports it)', () => {
    assert.equal((check('"MTU":1300,"mtu":1400') as { mtu: number }).mtu, 1400);
    assert.throws(() => check('"MTU":"x","mtu":1400'), (e: unknown) => e instanceof CniError && e.code === 7);
    assert.throws(() => check('"mtu":"x","MTU":1400'), (e: unknown) => e instanceof CniError && e.code === 7 && /mtu must be integer/.test(e.msg));
    assert.throws(() => check('"ipam":"x","IPAM":{"type":"host-local"}'), (e: unknown) => e instanceof CniError && /ipam must be object/.test(e.msg));
    assert.equal((check('"mtu":1300,"MTU":null') as { mtu: number }).mtu, 1300);
  });
  it('goTypeError walks into overridden objects and arrays', () => {
    assert.equal(goTypeError({ hostPort: 'x' }, { p: { hostPort: { t: 'integer' } } }, 'm'), 'm.hostPort');
    assert.equal(goTypeError([1, 'a'], { t: 'array', i: { t: 'integer' } }, 'l'), 'l.1');
    assert.equal(goTypeError(null, { t: 'integer' }, 'n'), undefined);
  });
});
