// The native addon against the real kernel, inside namespaces this test creates (root only).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sys } from '../../../../lib/sys/index.ts';
import { createTestNetns, ipJson, rootOnly, run } from '../../../../testkit/netns.ts';
import type { TestNetns } from '../../../../testkit/netns.ts';
import { NETLINK_ROUTE, RTM_NEWLINK, RTNLGRP_LINK, dumpLinkNames, getLinkDump, splitMessages } from './raw-rtnl.ts';

const ADDON = fileURLToPath(new URL('../../../../lib/sys/build/Release/weft_sys.node', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'weft-sys-ns-'));
after(() => rmSync(work, { recursive: true, force: true }));

function threadNetns(): string {
  return readlinkSync('/proc/thread-self/ns/net');
}

/** Runs fn with the thread inside the namespace at `path`, restoring it after (raw setns, no lib/netns). */
function inside<T>(path: string, fn: () => T): T {
  const home = openSync('/proc/thread-self/ns/net', 'r');
  const target = openSync(path, 'r');
  try {
    sys().setns(target);
    try {
      return fn();
    } finally {
      sys().setns(home);
    }
  } finally {
    closeSync(target);
    closeSync(home);
  }
}

describe('sys (root, own namespaces)', rootOnly(), () => {
  let ns: TestNetns;
  before(async () => {
    ns = await createTestNetns();
  });
  after(async () => {
    await ns.destroy();
  });

  test('setns moves the calling thread into the namespace and back', () => {
    const home = threadNetns();
    const nsIno = statSync(ns.path).ino;
    const seen = inside(ns.path, () => threadNetns());
    assert.equal(seen, `net:[${nsIno}]`);
    assert.notEqual(seen, home);
    assert.equal(threadNetns(), home);
  });

  test('nsType names the namespace type of an fd (CLONE_NEWNET, CLONE_NEWNS), ENOTTY for a plain file', () => {
    const types: number[] = [];
    for (const path of [ns.path, '/proc/self/ns/mnt']) {
      const fd = openSync(path, 'r');
      try {
        types.push(sys().nsType(fd));
      } finally {
        closeSync(fd);
      }
    }
    assert.deepEqual(types, [0x40000000, 0x00020000]);
    const file = join(work, 'plain-ns-type');
    writeFileSync(file, 'x');
    const fd = openSync(file, 'r');
    try {
      assert.throws(() => sys().nsType(fd), { code: 'ENOTTY', syscall: 'NS_GET_NSTYPE' });
    } finally {
      closeSync(fd);
    }
  });

  test('errors carry code, errno and syscall', () => {
    const file = join(work, 'plain');
    writeFileSync(file, 'x');
    const fd = openSync(file, 'r');
    try {
      assert.throws(() => sys().setns(fd), { code: 'EINVAL', errno: 22, syscall: 'setns', message: 'setns: Invalid argument (EINVAL)' });
      assert.throws(() => sys().pollStart(fd, () => undefined), { code: 'EPERM', syscall: 'uv_poll_init' });
    } finally {
      closeSync(fd);
    }
    assert.throws(() => sys().flock(fd, 'ex'), { code: 'EBADF', errno: 9, syscall: 'flock' });
    assert.throws(() => sys().setns(-1), { code: 'EBADF', syscall: 'setns' });
    assert.throws(() => sys().tunOpen('x'.repeat(16)), { code: 'EINVAL', syscall: 'TUNSETIFF' });
    assert.throws(() => sys().nlOpen(99, 0), { code: 'EPROTONOSUPPORT', syscall: 'socket' });
    assert.equal(threadNetns(), readlinkSync('/proc/self/ns/net'), 'a failed setns must not move the thread');
  });

  test('tunOpen inside the namespace creates a TUN link there only, gone on close', async () => {
    const tun = inside(ns.path, () => sys().tunOpen('wtun0'));
    try {
      assert.equal(tun.name, 'wtun0');
      const links = await ipJson<{ ifname: string; link_type: string; flags: string[] }[]>(ns, ['link', 'show', 'dev', 'wtun0']);
      assert.equal(links.length, 1);
      assert.equal(links[0]?.link_type, 'none'); // IFF_TUN: no L2 header
      assert.ok(links[0]?.flags.includes('POINTOPOINT'));
      const root = await run(['ip', '-j', 'link', 'show', 'dev', 'wtun0']);
      assert.notEqual(root.code, 0, 'the TUN link must not appear in the root netns');
    } finally {
      closeSync(tun.fd);
    }
    const after = await run(['ip', '-n', ns.name, 'link', 'show', 'dev', 'wtun0']);
    assert.notEqual(after.code, 0, 'a non-persistent TUN disappears with its fd');
  });

  test('tunOpen with a %d template returns the name the kernel chose', () => {
    const tun = inside(ns.path, () => sys().tunOpen('wt%d'));
    try {
      assert.match(tun.name, /^wt\d+$/);
    } finally {
      closeSync(tun.fd);
    }
  });

  test('a netlink socket opened inside lists that namespace links, also after setns back', async () => {
    const add = await ns.exec(['ip', 'link', 'add', 'wbr0', 'type', 'bridge']);
    assert.equal(add.code, 0, add.stderr);
    const fd = inside(ns.path, () => sys().nlOpen(NETLINK_ROUTE, 0));
    try {
      const names = dumpLinkNames(fd);
      const expected = (await ipJson<{ ifname: string }[]>(ns, ['link', 'show'])).map((l) => l.ifname).sort();
      assert.deepEqual(names, expected);
      assert.ok(names.includes('wbr0'));
    } finally {
      closeSync(fd);
    }
  });

  test('nlRecv: 0 polls, a timeout returns null after waiting', () => {
    const fd = sys().nlOpen(NETLINK_ROUTE, 0);
    try {
      assert.equal(sys().nlRecv(fd, 0), null);
      const t0 = performance.now();
      assert.equal(sys().nlRecv(fd, 60), null);
      assert.ok(performance.now() - t0 >= 50, 'nlRecv returned before its timeout');
    } finally {
      closeSync(fd);
    }
  });

  test('multicast: groups bitmask and nlAddMembership deliver link events of that namespace', async () => {
    const [byMask, byGroup] = inside(ns.path, () => [
      sys().nlOpen(NETLINK_ROUTE, 1 << (RTNLGRP_LINK - 1)),
      sys().nlOpen(NETLINK_ROUTE, 0),
    ] as const);
    try {
      sys().nlAddMembership(byGroup, RTNLGRP_LINK);
      const add = await ns.exec(['ip', 'link', 'add', 'wbr1', 'type', 'bridge']);
      assert.equal(add.code, 0, add.stderr);
      for (const fd of [byMask, byGroup]) {
        const dgram = sys().nlRecv(fd, 2000);
        assert.ok(dgram !== null, 'no link event arrived');
        assert.equal(splitMessages(dgram)[0]?.type, RTM_NEWLINK);
      }
    } finally {
      closeSync(byMask);
      closeSync(byGroup);
    }
  });

  test('pollStart fires when the fd becomes readable; pollStop stops it', async () => {
    const s = sys();
    const fd = s.nlOpen(NETLINK_ROUTE, 0);
    try {
      let fired = 0;
      let wake: () => void = () => undefined;
      const id = s.pollStart(fd, () => {
        fired++;
        while (s.nlRecv(fd, 0) !== null) {
          // drain, or level-triggered readiness fires again at once
        }
        wake();
      });
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(fired, 0, 'fired before anything was readable');
      const readable = new Promise<void>((r) => (wake = r));
      s.nlSend(fd, getLinkDump(7));
      await Promise.race([readable, new Promise((_, rej) => setTimeout(() => rej(new Error('poll callback never ran')), 2000))]);
      assert.ok(fired >= 1);
      s.pollStop(id);
      s.pollStop(id); // idempotent
      const before = fired;
      s.nlSend(fd, getLinkDump(8));
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(fired, before, 'callback ran after pollStop');
      assert.ok(s.nlRecv(fd, 1000) !== null, 'the reply is still there to read');
    } finally {
      closeSync(fd);
    }
  });
});

describe('flock between processes (no root needed)', () => {
  const lockFile = join(work, 'lock');
  writeFileSync(lockFile, '');

  // A child node process that takes `op` on its own open of lockFile, says "locked", holds it for holdMs.
  async function holder(op: 'sh' | 'ex', holdMs: number): Promise<ChildProcess> {
    const script =
      `const m = { exports: {} }; process.dlopen(m, ${JSON.stringify(ADDON)});` +
      `const fd = require('node:fs').openSync(${JSON.stringify(lockFile)}, 'r');` +
      `m.exports.flock(fd, ${JSON.stringify(op)}); process.stdout.write('locked\\n');` +
      `setTimeout(() => process.exit(0), ${holdMs});`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (d: Buffer) => (d.toString().includes('locked') ? resolve() : undefined));
      child.on('exit', (code) => reject(new Error(`lock holder exited early (${String(code)})`)));
    });
    return child;
  }

  async function exited(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null) return;
    await new Promise((r) => child.once('exit', r));
  }

  test('exclusive held elsewhere: non-blocking sh/ex return false, then true once released', async () => {
    const child = await holder('ex', 400);
    const fd = openSync(lockFile, 'r');
    try {
      assert.equal(sys().flock(fd, 'ex', true), false);
      assert.equal(sys().flock(fd, 'sh', true), false);
      await exited(child);
      assert.equal(sys().flock(fd, 'ex', true), true);
      assert.equal(sys().flock(fd, 'un'), true);
    } finally {
      child.kill();
      closeSync(fd);
    }
  });

  test('shared held elsewhere: shared granted, exclusive refused', async () => {
    const child = await holder('sh', 2000);
    const a = openSync(lockFile, 'r');
    const b = openSync(lockFile, 'r');
    try {
      assert.equal(sys().flock(a, 'sh', true), true);
      assert.equal(sys().flock(b, 'ex', true), false);
    } finally {
      child.kill();
      await exited(child);
      closeSync(a);
      closeSync(b);
    }
  });

  test('blocking exclusive waits until the holder releases', async () => {
    const child = await holder('ex', 300);
    const fd = openSync(lockFile, 'r');
    try {
      const t0 = performance.now();
      assert.equal(sys().flock(fd, 'ex'), true);
      assert.ok(performance.now() - t0 >= 150, 'flock did not wait for the holder');
    } finally {
      child.kill();
      await exited(child);
      closeSync(fd);
    }
  });
});

describe('addon lifetime (no root needed)', () => {
  // Regression: a worker that exits with watches still open (or just stopped) used to crash the
  // process, because libuv ran close callbacks after Node had unloaded the addon.
  test('a worker may exit with poll watches active, stopped, or never started', async () => {
    const worker =
      `const m = { exports: {} }; process.dlopen(m, ${JSON.stringify(ADDON)}); const s = m.exports;` +
      `const a = s.nlOpen(0, 0), b = s.nlOpen(0, 0);` +
      `s.pollStart(a, () => {}, true); s.pollStop(s.pollStart(b, () => {}, false));` +
      `setTimeout(() => process.exit(0), 10);`;
    const main =
      `const { Worker } = require('node:worker_threads');` +
      `let left = 3; for (let i = 0; i < 3; i++) new Worker(${JSON.stringify(worker)}, { eval: true })` +
      `.on('exit', (c) => { if (c !== 0) process.exit(10 + c); if (--left === 0) process.stdout.write('ok'); });`;
    const res = await run([process.execPath, '-e', main]);
    assert.equal(res.code, 0, `exit ${res.code}: ${res.stderr}`);
    assert.equal(res.stdout, 'ok');
  });
});
