// CNI_ARGS parsing: pairs, IgnoreUnknown, K8S_POD_* keys, plugin-known keys and limits.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatCniArgs, parseCniArgs } from '../../../../lib/cni/args.ts';
import { CniError } from '../../../../lib/cni/errors.ts';

const isEnvError = (re: RegExp) => (e: unknown) => e instanceof CniError && e.code === 4 && re.test(`${e.msg} ${e.details}`);

describe('parseCniArgs', () => {
  const ok: [string, string | undefined, readonly string[], Record<string, string>][] = [
    ['unset', undefined, [], {}],
    ['empty', '', [], {}],
    ['known key', 'IP=10.0.0.5', ['IP'], { IP: '10.0.0.5' }],
    ['trailing semicolon', 'IP=10.0.0.5;', ['IP'], { IP: '10.0.0.5' }],
    ['value with =', 'MAC=aa;TOKEN=abc==', ['MAC', 'TOKEN'], { MAC: 'aa', TOKEN: 'abc==' }],
    ['empty value', 'IP=', ['IP'], { IP: '' }],
    ['K8S keys always known', 'K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p;K8S_POD_INFRA_CONTAINER_ID=abc;K8S_POD_UID=u;K8S_POD_FUTURE=1', [], {
      K8S_POD_NAMESPACE: 'ns', K8S_POD_NAME: 'p', K8S_POD_INFRA_CONTAINER_ID: 'abc', K8S_POD_UID: 'u', K8S_POD_FUTURE: '1',
    }],
    ['IgnoreUnknown=1', 'IgnoreUnknown=1;FOO=bar', [], { IgnoreUnknown: '1', FOO: 'bar' }],
    ['IGNOREUNKNOWN=true', 'FOO=bar;IGNOREUNKNOWN=true', [], { FOO: 'bar', IGNOREUNKNOWN: 'true' }],
    ['IgnoreUnknown=0 with known keys only', 'IgnoreUnknown=0;IP=1', ['IP'], { IgnoreUnknown: '0', IP: '1' }],
  ];
  for (const [name, raw, known, want] of ok) {
    it(`accepts ${name}`, () => {
      const got = parseCniArgs(raw, { known });
      assert.deepEqual({ ...got }, want);
    });
  }

  it('keeps __proto__ as an own key without touching prototypes', () => {
    const got = parseCniArgs('IgnoreUnknown=1;__proto__=x', {});
    assert.equal(Object.getPrototypeOf(got), null);
    assert.equal(got['__proto__'], 'x');
  });

  const bad: [string, string, readonly string[], RegExp][] = [
    ['unknown key', 'FOO=bar', [], /FOO/],
    ['unknown key beside known', 'IP=1;FOO=bar', ['IP'], /FOO/],
    ['IgnoreUnknown=0', 'IgnoreUnknown=0;FOO=bar', [], /FOO/],
    ['pair without =', 'IgnoreUnknown=1;FOO', [], /not KEY=VALUE/],
    ['empty key', 'IgnoreUnknown=1;=x', [], /not KEY=VALUE/],
    ['key with a space', 'IgnoreUnknown=1;A B=x', [], /bad key/],
    ['duplicate key', 'IP=1;IP=2', ['IP'], /duplicate/],
    ['value too long', `IP=${'x'.repeat(5000)}`, ['IP'], /limit/],
    ['NUL', 'IP=a\0b', ['IP'], /NUL/],
    ['whole string too long', `IgnoreUnknown=1;${'A=1;'.repeat(20000)}`, [], /too long/],
  ];
  for (const [name, raw, known, re] of bad) {
    it(`rejects ${name} with code 4`, () => {
      assert.throws(() => parseCniArgs(raw, { known }), isEnvError(re));
    });
  }

  it('formats back', () => {
    assert.equal(formatCniArgs(parseCniArgs('IgnoreUnknown=1;IP=10.0.0.5')), 'IgnoreUnknown=1;IP=10.0.0.5');
  });
});
