// Unit tests for host-local's view of the other networks in its data dir: an ADD never hands out an
// address held under another network name (kube-flannel's `cbr0` records after a switch to another
// name), takes the other networks' locks shared and in name order (starting over when a network
// appears meanwhile), and writes nothing into them but a missing lock file.
// No root: flock is faked and records which lock file each call was for.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { formatIp, type IpAddr } from '../../../../lib/ip/index.ts';
import { allocate, findAttachment, releaseAttachment } from '../../../../ipam/host-local/allocator.ts';
import { HostLocalCode } from '../../../../ipam/host-local/errors.ts';
import { DiskStore } from '../../../../ipam/host-local/disk-store.ts';
import type { RangeSet } from '../../../../ipam/host-local/range.ts';
import { CniError, ErrorCode } from '../../../../lib/cni/errors.ts';
import { ip, range } from './helpers.ts';

const root = mkdtempSync(join(tmpdir(), 'weft-unit-siblings-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const set: RangeSet = [range('10.99.5.0/24')];
const at = (containerId: string) => ({ containerId, ifname: 'eth0' });
const first = (got: ReadonlyArray<{ ip: IpAddr }>): string => {
  assert.equal(got.length, 1);
  return formatIp((got[0] as { ip: IpAddr }).ip);
};

/** flock calls as "<op> <network>" (the network directory of the fd's lock file). */
function recorder(busy: ReadonlySet<string> = new Set()): { calls: string[]; flock: (fd: number, op: 'sh' | 'ex' | 'un') => boolean } {
  const calls: string[] = [];
  return {
    calls,
    flock: (fd, op) => {
      const net = basename(dirname(readlinkSync(`/proc/self/fd/${fd}`)));
      calls.push(`${op} ${net}`);
      return !(op !== 'un' && busy.has(net));
    },
  };
}

/** A data dir where network `name` holds `ips` as the reference writes them (lock file included unless `noLock`). */
function seed(dataDir: string, name: string, ips: string[], noLock = false): void {
  const dir = join(dataDir, name);
  mkdirSync(dir, { recursive: true });
  if (!noLock) writeFileSync(join(dir, 'lock'), '');
  ips.forEach((a, i) => writeFileSync(join(dir, a), `flannel-pod-${i}\r\neth0`));
  if (ips.length > 0) writeFileSync(join(dir, 'last_reserved_ip.0'), ips[ips.length - 1] as string);
}

void test('round-robin skips every address held under another network name, and the data dir stays as it was', () => {
  const dataDir = join(root, `d${n++}`);
  seed(dataDir, 'cbr0', ['10.99.5.2', '10.99.5.3', '10.99.5.5']);
  const before = readdirSync(join(dataDir, 'cbr0')).sort();
  const r = recorder();
  const store = new DiskStore(dataDir, 'weft', r.flock);
  const got = ['p1', 'p2', 'p3'].map((id) => first(allocate(store, [set], at(id), [])));
  assert.deepEqual(got, ['10.99.5.4', '10.99.5.6', '10.99.5.7']);
  assert.deepEqual(readdirSync(join(dataDir, 'cbr0')).sort(), before, 'nothing written into cbr0');
  store.close();
});

void test('a requested address held under another network is refused with 111 naming that network', () => {
  const dataDir = join(root, `d${n++}`);
  seed(dataDir, 'cbr0', ['10.99.5.2']);
  const store = new DiskStore(dataDir, 'weft', recorder().flock);
  assert.throws(
    () => allocate(store, [set], at('p1'), [ip('10.99.5.2')]),
    (e: unknown) => e instanceof CniError && e.code === HostLocalCode.requestedUnavailable && e.details.includes('network cbr0'),
  );
  assert.deepEqual(readdirSync(join(dataDir, 'weft')).sort(), ['lock'], 'nothing reserved');
  store.close();
});

void test('locks: the other networks shared, all in name order; DEL and CHECK take only their own', () => {
  const dataDir = join(root, `d${n++}`);
  seed(dataDir, 'a-net', []);
  seed(dataDir, 'zz-net', []);
  seed(dataDir, 'nolock', ['10.99.5.2'], true);
  const r = recorder();
  const store = new DiskStore(dataDir, 'm-net', r.flock);
  assert.equal(first(allocate(store, [set], at('p1'), [])), '10.99.5.3');
  // Sorted: a-net < m-net < nolock < zz-net; closing the fds releases the shared locks.
  assert.deepEqual(r.calls, ['sh a-net', 'ex m-net', 'sh nolock', 'sh zz-net', 'un m-net']);
  // A directory without a lock file gets the one its own writer would create (mode 0750), nothing else.
  assert.deepEqual(readdirSync(join(dataDir, 'nolock')).sort(), ['10.99.5.2', 'last_reserved_ip.0', 'lock']);
  assert.equal(statSync(join(dataDir, 'nolock', 'lock')).mode & 0o777, 0o750 & ~process.umask());
  r.calls.length = 0;
  findAttachment(store, at('p1'));
  releaseAttachment(store, at('p1'));
  assert.deepEqual(r.calls, ['ex m-net', 'un m-net', 'ex m-net', 'un m-net']);
  store.close();
});

void test('a network made while the locks are taken: let go, start over with it, skip what it holds', () => {
  const dataDir = join(root, `d${n++}`);
  const r = recorder();
  let made = false;
  const flock = (fd: number, op: 'sh' | 'ex' | 'un'): boolean => {
    // Another writer makes its directory and reserves right after we listed the networks.
    if (!made && op === 'ex') {
      made = true;
      seed(dataDir, 'cbr0', ['10.99.5.2']);
    }
    return r.flock(fd, op);
  };
  const store = new DiskStore(dataDir, 'weft', flock);
  assert.equal(first(allocate(store, [set], at('p1'), [])), '10.99.5.3');
  assert.deepEqual(r.calls, ['ex weft', 'un weft', 'sh cbr0', 'ex weft', 'un weft']);
  store.close();
});

void test('another network whose lock is never released: code 11 naming its lock, nothing reserved', () => {
  const dataDir = join(root, `d${n++}`);
  seed(dataDir, 'cbr0', []);
  const store = new DiskStore(dataDir, 'weft', recorder(new Set(['cbr0'])).flock, 30);
  assert.throws(
    () => allocate(store, [set], at('p1'), []),
    (e: unknown) => e instanceof CniError && e.code === ErrorCode.tryAgainLater && e.msg.includes(join(dataDir, 'cbr0', 'lock')),
  );
  assert.deepEqual(readdirSync(join(dataDir, 'weft')).sort(), ['lock']);
  // The own lock was not held after the failure: the next section takes it again.
  const ok = new DiskStore(dataDir, 'weft', recorder().flock);
  assert.equal(allocate(ok, [set], at('p1'), []).length, 1);
  ok.close();
  store.close();
});
