// The stall bound (WEFT_STALL_TIMEOUT_MS) and how a stalled nft becomes code 11 (no root, no nft run).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, toCniError } from '../../../../lib/cni/errors.ts';
import { DEFAULT_STALL_TIMEOUT_MS, stallTimeoutMs } from '../../../../lib/cni/stall.ts';
import { NftError } from '../../../../lib/netfilter/errors.ts';

describe('stallTimeoutMs', () => {
  it('reads a positive integer, else the default', () => {
    assert.equal(stallTimeoutMs({ WEFT_STALL_TIMEOUT_MS: '250' }), 250);
    for (const bad of [undefined, '', '0', '-5', '1.5', 'ten', '1e99999']) {
      assert.equal(stallTimeoutMs({ WEFT_STALL_TIMEOUT_MS: bad }), DEFAULT_STALL_TIMEOUT_MS, String(bad));
    }
  });
});

describe('toCniError of nft failures', () => {
  it('a timed-out nft is code 11 with its message; a failed one stays 999', () => {
    const stalled = toCniError(new NftError('timeout', 'nftables: /usr/sbin/nft did not finish within 5 ms (WEFT_STALL_TIMEOUT_MS) and was killed'));
    assert.equal(stalled.code, ErrorCode.tryAgainLater);
    assert.match(stalled.msg, /did not finish within 5 ms/);
    assert.equal(toCniError(new NftError('failed', 'nftables: nft -f - failed (exit 1)')).code, ErrorCode.unexpected);
  });
});
