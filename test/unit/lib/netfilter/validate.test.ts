// Validation/escaping tables: every value that could reach an nft script is accepted or refused here.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NftError } from '../../../../lib/netfilter/errors.ts';
import { formatAtom, formatComment, formatKey, validateFamily, validateName, validatePort } from '../../../../lib/netfilter/validate.ts';

function refused(fn: () => unknown): void {
  assert.throws(fn, (err: unknown) => err instanceof NftError && err.kind === 'invalid');
}

describe('validateName', () => {
  for (const ok of ['weft', 'pods-cbr0', 'masq_postrouting', 'pods4', 'a1']) it(`accepts ${ok}`, () => assert.equal(validateName('set', ok), ok));
  for (const bad of ['', 'ip', 'tcp', 'counter', 'Pods-x', '1abc', 'a b', 'a;b', 'a-', '-a', 'x'.repeat(65), 'pods-cbr0\n', '@pods-x', 'a"b-1'])
    it(`refuses ${JSON.stringify(bad)}`, () => refused(() => validateName('set', bad)));
  it('names the field and the value in the message', () => {
    assert.throws(() => validateName('chain', 'a b'), /invalid chain "a b"/);
  });
});

describe('formatComment', () => {
  for (const ok of ['ctr1', 'a'.repeat(128), '0123abcdef:eth0', 'net cbr0 v4', 'k=v,x/y@z+1'])
    it(`accepts ${ok.slice(0, 20)}`, () => assert.equal(formatComment('c', ok), `"${ok}"`));
  for (const bad of ['', 'a'.repeat(129), 'x"; flush ruleset; "', 'a\nb', 'a\\b', '$var', 'a  b', ' a', 'a;b', 'a#b', 'é', "it's"])
    it(`refuses ${JSON.stringify(bad).slice(0, 30)}`, () => refused(() => formatComment('c', bad)));
});

describe('formatAtom', () => {
  const table: [unknown, string][] = [
    ['10.0.0.5', '10.0.0.5'],
    ['10.244.0.0/16', '10.244.0.0/16'],
    ['FD00::1', 'fd00::1'],
    ['fd00::/64', 'fd00::/64'],
    [8080, '8080'],
    [0, '0'],
    ['tcp', 'tcp'],
    ['accept', 'accept'],
    ['jump pod-chain', 'jump pod-chain'],
    ['AA:BB:cc:dd:ee:ff', 'aa:bb:cc:dd:ee:ff'],
  ];
  for (const [input, out] of table) it(`formats ${String(input)}`, () => assert.equal(formatAtom('v', input), out));
  for (const bad of ['10.0.0.256', '10.0.0.1/33', 'fd00::/129', 'fe80::1%eth0', '010.0.0.1', ' 10.0.0.1', '10.0.0.1 ', -1, 1.5, 2 ** 32, 'jump ip', 'pods-x', '{ 1.2.3.4 }', null, {}])
    it(`refuses ${JSON.stringify(bad)}`, () => refused(() => formatAtom('v', bad)));
  it('accepts names only when asked', () => assert.equal(formatAtom('v', 'pods-x', { allowName: true }), 'pods-x'));
});

describe('formatKey / validatePort / validateFamily', () => {
  it('joins a concatenation with " . "', () => assert.equal(formatKey('k', ['tcp', 8080, '192.168.1.2']), 'tcp . 8080 . 192.168.1.2'));
  it('refuses an empty concatenation', () => refused(() => formatKey('k', [])));
  it('ports are 1..65535', () => {
    assert.equal(validatePort('p', 443), 443);
    for (const bad of [0, 65536, '80', 1.5]) refused(() => validatePort('p', bad));
  });
  it('families', () => {
    for (const f of ['ip', 'ip6', 'inet', 'bridge']) assert.equal(validateFamily(f), f);
    for (const bad of ['arp', 'netdev', '']) refused(() => validateFamily(bad));
  });
});
