// lib/netns against real namespaces created by this test (root only): withNetns switching and
// restoring, sockets that keep their namespace, and sysctls that land in the right namespace.
import assert from 'node:assert/strict';
import { closeSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import {
  isOwnNetns,
  isSameNetns,
  openNetns,
  readSysctl,
  withNetns,
  writeSysctl,
} from '../../../../lib/netns/index.ts';
import type { NetnsHandle } from '../../../../lib/netns/index.ts';
import { sys } from '../../../../lib/sys/index.ts';
import { createTestNetns, ipJson, rootOnly, run, withTestNetns, spawnInNetns } from '../../../../testkit/netns.ts';
import type { TestNetns } from '../../../../testkit/netns.ts';
import { NETLINK_ROUTE, dumpLinkNames } from '../sys/raw-rtnl.ts';

function threadNetns(): string {
  return readlinkSync('/proc/thread-self/ns/net');
}

describe('withNetns (root, own namespaces)', rootOnly(), () => {
  let ns: TestNetns;
  let h: NetnsHandle;
  let home: string;
  before(async () => {
    ns = await createTestNetns();
    h = openNetns(ns.path);
    home = threadNetns();
  });
  after(async () => {
    h.close();
    await ns.destroy();
  });

  test('openNetns accepts an `ip netns` bind mount and identifies it', () => {
    assert.equal(h.ino, statSync(ns.path, { bigint: true }).ino);
    assert.ok(isSameNetns(h, ns.path));
    assert.equal(isOwnNetns(ns.path), false);
  });

  test('openNetns accepts /proc/<pid>/ns/net of a process inside the namespace', async () => {
    const child = spawnInNetns(ns.name, ['sleep', '10'], { stdio: 'ignore' });
    try {
      // `ip netns exec` execs sleep in place, so the pid is the sleeper once it has switched.
      let p: NetnsHandle | undefined;
      for (let i = 0; i < 100 && p === undefined; i++) {
        const cand = openNetns(`/proc/${String(child.pid)}/ns/net`);
        if (isSameNetns(cand, h)) p = cand;
        else {
          cand.close();
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      assert.ok(p !== undefined, 'the child never showed up in the test namespace');
      assert.equal(p.ino, h.ino);
      p.close();
    } finally {
      child.kill();
    }
  });

  test('runs fn inside the target and returns its value; the thread comes back', () => {
    const inside = withNetns(h, () => ({ link: threadNetns(), own: isOwnNetns(ns.path) }));
    assert.equal(inside.link, `net:[${h.ino}]`);
    assert.equal(inside.own, true);
    assert.equal(threadNetns(), home);
  });

  test('restores the original netns when fn throws, and rethrows the same error', () => {
    const boom = new Error('boom');
    assert.throws(
      () =>
        withNetns(h, () => {
          assert.equal(threadNetns(), `net:[${h.ino}]`);
          throw boom;
        }),
      (e: unknown) => e === boom,
    );
    assert.equal(threadNetns(), home);
  });

  test('rejects an async function before switching, and a returned Promise after switching back', () => {
    let ran = false;
    assert.throws(
      () =>
        withNetns(h, async () => {
          ran = true;
          await Promise.resolve();
        }),
      TypeError,
    );
    assert.equal(ran, false);
    assert.throws(() => withNetns(h, () => Promise.reject(new Error('late'))), /only synchronous work/);
    assert.equal(threadNetns(), home);
  });

  test('nests: inner switch returns to the outer target, outer to home', async () => {
    await withTestNetns((other) => {
      const o = openNetns(other.path);
      try {
        withNetns(h, () => {
          assert.equal(withNetns(o, () => threadNetns()), `net:[${o.ino}]`);
          assert.equal(threadNetns(), `net:[${h.ino}]`);
        });
      } finally {
        o.close();
      }
      assert.equal(threadNetns(), home);
    });
  });

  test('a closed handle is refused without moving the thread', () => {
    const tmp = openNetns(ns.path);
    tmp.close();
    assert.throws(() => withNetns(tmp, () => 1), /closed/);
    assert.equal(threadNetns(), home);
  });

  test('aborts the process (loudly) when switching back fails', async () => {
    const netns = fileURLToPath(new URL('../../../../lib/netns/index.ts', import.meta.url));
    // fn sabotages the return trip for real: it closes withNetns's fd of the original netns.
    const script =
      `const fs = await import('node:fs');` +
      `const { openNetns, withNetns } = await import(${JSON.stringify(netns)});` +
      `const home = fs.readlinkSync('/proc/thread-self/ns/net');` +
      `withNetns(openNetns(${JSON.stringify(ns.path)}), () => {` +
      `  for (const f of fs.readdirSync('/proc/self/fd')) {` +
      `    try { if (fs.readlinkSync('/proc/self/fd/' + f) === home) fs.closeSync(Number(f)); } catch {}` +
      `  }` +
      `});` +
      `process.stdout.write('survived');`;
    // ulimit -c 0: no core file from process.abort().
    const res = await run(['bash', '-c', 'ulimit -c 0; exec "$0" --import tsx --input-type=module -e "$1"', process.execPath, script]);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /FATAL: cannot return to the original network namespace/);
    assert.equal(res.code, 134); // 128 + SIGABRT
  });

  test('a netlink socket created inside keeps that namespace after withNetns returns', async () => {
    const add = await ns.exec(['ip', 'link', 'add', 'wbr-keep', 'type', 'bridge']);
    assert.equal(add.code, 0, add.stderr);
    const fd = withNetns(h, () => sys().nlOpen(NETLINK_ROUTE, 0));
    try {
      assert.equal(threadNetns(), home);
      const names = dumpLinkNames(fd); // runs in the host netns, talks to the pod's
      const expected = (await ipJson<{ ifname: string }[]>(ns, ['link', 'show'])).map((l) => l.ifname).sort();
      assert.deepEqual(names, expected);
      assert.ok(names.includes('wbr-keep'));
    } finally {
      closeSync(fd);
    }
  });

  test('sysctls written inside land in the target netns only', async () => {
    const hostBefore = readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim();
    const inner = withNetns(h, () => readSysctl('net/ipv4/ip_forward'));
    const want = inner === '1' ? '0' : '1';
    withNetns(h, () => writeSysctl('net/ipv4/ip_forward', want));
    assert.equal(withNetns(h, () => readSysctl('net/ipv4/ip_forward')), want);
    const seen = await ns.exec(['cat', '/proc/sys/net/ipv4/ip_forward']);
    assert.equal(seen.stdout.trim(), want);
    assert.equal(readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim(), hostBefore, 'host sysctl changed');
  });

  test('a per-link sysctl of a link that exists only in the target', async () => {
    const add = await ns.exec(['ip', 'link', 'add', 'wbr-sys', 'type', 'bridge']);
    assert.equal(add.code, 0, add.stderr);
    withNetns(h, () => writeSysctl('net/ipv6/conf/wbr-sys/accept_dad', 0));
    const seen = await ns.exec(['cat', '/proc/sys/net/ipv6/conf/wbr-sys/accept_dad']);
    assert.equal(seen.stdout.trim(), '0');
    assert.throws(() => writeSysctl('net/ipv6/conf/wbr-sys/accept_dad', 0), { code: 'ENOENT' });
    assert.throws(() => withNetns(h, () => writeSysctl('net/ipv4/conf/nope0/rp_filter', 1)), { code: 'ENOENT' });
  });
});
