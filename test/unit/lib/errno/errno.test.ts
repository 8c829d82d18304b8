// The errno helper: the code of node:fs, netlink and netns errors; nothing for CNI errors (numeric
// codes) or values that are not errors. No root.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { CniError } from '../../../../lib/cni/errors.ts';
import { errnoCode, isSysError } from '../../../../lib/errno/errno.ts';
import { NetlinkError } from '../../../../lib/netlink/errors.ts';
import { NotNetnsError } from '../../../../lib/netns/handle.ts';

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  assert.fail('did not throw');
}

test('errno names of fs, netlink and netns errors; none of CNI errors or non-errors', () => {
  const fsErr = thrown(() => readFileSync('/nonexistent/weft-errno-test'));
  assert.equal(errnoCode(fsErr), 'ENOENT');
  assert.equal(errnoCode(new NetlinkError('op', 17)), 'EEXIST');
  assert.equal(errnoCode(new NotNetnsError('/x', 'a file')), 'ENOTNETNS');
  assert.equal(errnoCode(new CniError(3, 'gone')), undefined);
  assert.equal(errnoCode({ code: 'ENOENT' }), undefined, 'not an Error');
  assert.equal(errnoCode(null), undefined);
});

test('isSysError: any errno, or one of the codes given', () => {
  const e = new NetlinkError('op', 2);
  assert.ok(isSysError(e) && isSysError(e, 'ENOENT') && isSysError(e, 'ENODEV', 'ENOENT'));
  assert.ok(!isSysError(e, 'EEXIST') && !isSysError(new CniError(7, 'bad')) && !isSysError(undefined, 'ENOENT'));
});
