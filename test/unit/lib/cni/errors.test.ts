// CniError codes, the error document and toCniError.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as E from '../../../../lib/cni/errors.ts';

describe('CniError', () => {
  const table: [E.CniError, number][] = [
    [E.incompatibleVersion('m'), 1],
    [E.unsupportedField('m'), 2],
    [E.unknownContainer('m'), 3],
    [E.invalidEnv('m'), 4],
    [E.ioFailure('m'), 5],
    [E.decodeFailure('m'), 6],
    [E.invalidConfig('m'), 7],
    [E.tryAgainLater('m'), 11],
    [E.weftError(123, 'm'), 123],
  ];
  for (const [err, code] of table) {
    it(`helper for code ${code}`, () => {
      assert.ok(err instanceof Error && err instanceof E.CniError);
      assert.equal(err.code, code);
    });
  }

  it('renders the document with details only when present', () => {
    assert.deepEqual(E.invalidEnv('bad', 'why').toJSON('1.0.0'), { cniVersion: '1.0.0', code: 4, msg: 'bad', details: 'why' });
    assert.deepEqual(E.invalidEnv('bad').toJSON('0.4.0'), { cniVersion: '0.4.0', code: 4, msg: 'bad' });
  });

  it('weftError refuses spec-reserved codes', () => {
    assert.throws(() => E.weftError(7, 'm'), RangeError);
    assert.throws(() => E.weftError(999, 'm'), RangeError);
  });

  it('toCniError keeps CniErrors and wraps the rest as 999 with the cause', () => {
    const c = E.tryAgainLater('x');
    assert.equal(E.toCniError(c), c);
    const sys = Object.assign(new Error('open /x'), { code: 'ENOENT' });
    const w = E.toCniError(sys);
    assert.deepEqual([w.code, w.details, w.cause], [999, 'ENOENT: open /x', sys]);
    assert.equal(E.toCniError('str').details, 'str');
  });
});
