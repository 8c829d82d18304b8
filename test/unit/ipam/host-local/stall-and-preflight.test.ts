// Issue 20 in host-local, without root: requested addresses are checked against the ranges with no
// store at all (the checks ADD runs before touching the data dir), and a lock that stays held past
// the bound is code 11 naming the lock file, with nothing reserved.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { checkRequested } from '../../../../ipam/host-local/allocator.ts';
import { DiskStore } from '../../../../ipam/host-local/disk-store.ts';
import { HostLocalCode } from '../../../../ipam/host-local/errors.ts';
import type { RangeSet } from '../../../../ipam/host-local/range.ts';
import { CniError, ErrorCode } from '../../../../lib/cni/errors.ts';
import { cniCode } from '../../lib/cni/helpers.ts';
import { ip, range } from './helpers.ts';

const root = mkdtempSync(join(tmpdir(), 'weft-unit-stall-'));
after(() => rmSync(root, { recursive: true, force: true }));

const code = cniCode;

describe('checkRequested (no store)', () => {
  const sets: RangeSet[] = [[range('10.1.2.0/24')], [range('fd00:1::/64')]];
  it('accepts one address per set, and none', () => {
    assert.equal(code(() => checkRequested(sets, [ip('10.1.2.9'), ip('fd00:1::9')])), undefined);
    assert.equal(code(() => checkRequested(sets, [])), undefined);
  });
  it('refuses an address in no range (112), the gateway (114), two from one set (112)', () => {
    assert.equal(code(() => checkRequested(sets, [ip('10.9.9.9')])), HostLocalCode.requestedNotInRange);
    assert.equal(code(() => checkRequested(sets, [ip('10.1.2.1')])), HostLocalCode.requestedIsGateway);
    assert.equal(code(() => checkRequested(sets, [ip('10.1.2.5'), ip('10.1.2.6')])), HostLocalCode.requestedNotInRange);
  });
});

describe('DiskStore lock bound', () => {
  it('a lock never granted is code 11 naming the lock file after lockTimeoutMs; fn never runs', () => {
    const tries: Array<boolean | number | undefined> = [];
    const neverGranted = (_fd: number, op: 'sh' | 'ex' | 'un', wait?: boolean | number): boolean => {
      if (op === 'ex') tries.push(wait);
      return op !== 'ex';
    };
    const store = new DiskStore(join(root, 'a'), 'net', neverGranted, 40);
    let ran = false;
    try {
      store.withLock(() => (ran = true));
      assert.fail('withLock returned');
    } catch (e) {
      assert.ok(e instanceof CniError);
      assert.equal(e.code, ErrorCode.tryAgainLater);
      assert.match(e.msg, /host-local: lock .*\/a\/net\/lock is held by another process/);
      assert.match(e.details, /40 ms \(WEFT_STALL_TIMEOUT_MS\)/);
    } finally {
      store.close();
    }
    assert.equal(ran, false);
    // One non-blocking try, then one wait in the kernel bounded by the timeout: no polling with sleeps.
    assert.deepEqual(tries, [true, 40]);
    assert.deepEqual(readdirSync(join(root, 'a', 'net')), ['lock']);
  });
  it('a lock handed over during the bounded wait runs fn', () => {
    let n = 0;
    const waits: Array<boolean | number | undefined> = [];
    const laterGranted = (_fd: number, op: 'sh' | 'ex' | 'un', wait?: boolean | number): boolean => {
      if (op === 'ex') waits.push(wait);
      return op !== 'ex' || ++n >= 2;
    };
    const store = new DiskStore(join(root, 'b'), 'net', laterGranted, 5_000);
    try {
      assert.equal(store.withLock(() => 42), 42);
    } finally {
      store.close();
    }
    assert.deepEqual(waits, [true, 5_000]);
  });
});
