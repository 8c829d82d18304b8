// Namespace fixture for the netlink tests: namespaces from the test kit (unique names, removed even
// on failure), each with an Rtnl socket opened inside it (via withNetns, so the socket stays bound
// there). The root namespace is never touched.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import { NetnsHandle, openNetns, withNetns } from '../../../../lib/netns/index.ts';
import { Rtnl } from '../../../../lib/netlink/rtnl.ts';
import { createTestNetnsSync, inNetns } from '../../../../testkit/netns.ts';

/** A test namespace with an rtnetlink socket bound inside it. */
export interface TestNs {
  name: string;
  handle: NetnsHandle;
  rtnl: Rtnl;
  /** `ip -j -n <name> ...args` parsed. */
  ipj(...args: string[]): unknown;
  /** Runs a command inside the namespace with `ip netns exec`, returning stdout. */
  exec(cmd: string, ...args: string[]): string;
}

/** Creates and tracks test namespaces; call cleanup() from an `after` hook. */
export class NsFixture {
  private readonly made: Array<TestNs & { destroySync(): void }> = [];

  /** Creates `weft-t-<pid>-<random>` and opens a socket inside it. */
  create(): TestNs {
    const kit = createTestNetnsSync();
    const { name } = kit;
    let handle: NetnsHandle | undefined;
    let rtnl: Rtnl;
    try {
      handle = openHandle(`/var/run/netns/${name}`);
      const h = handle;
      rtnl = withNetns(h, () => Rtnl.open());
    } catch (e) {
      handle?.close();
      kit.destroySync();
      throw e;
    }
    const ns = {
      name,
      handle,
      rtnl,
      ipj: (...args: string[]) => JSON.parse(execFileSync('ip', ['-j', '-n', name, ...args], { encoding: 'utf8' }) || 'null') as unknown,
      exec: (cmd: string, ...args: string[]) => {
        const [file = 'ip', ...argv] = inNetns(name, [cmd, ...args]);
        return execFileSync(file, argv, { encoding: 'utf8' });
      },
      destroySync: kit.destroySync,
    };
    this.made.push(ns);
    return ns;
  }

  /** Closes sockets and handles and deletes every namespace made, continuing past failures. */
  cleanup(): void {
    for (const ns of this.made.splice(0)) {
      try { ns.rtnl.close(); } catch { /* already closed */ }
      try { ns.handle.close(); } catch { /* already closed */ }
      ns.destroySync();
    }
  }
}

/**
 * openNetns, or a plain handle when it refuses: on kernel 6.18 /proc/self/fd of a bind-mounted
 * nsfs file reads as the mount path, not `net:[ino]`, and lib/netns's check rejects it.
 */
function openHandle(path: string): NetnsHandle {
  try {
    return openNetns(path);
  } catch (e) {
    if ((e as { code?: unknown }).code !== 'ENOTNETNS') throw e;
  }
  const fd = openSync(path, constants.O_RDONLY);
  try {
    const st = fstatSync(fd, { bigint: true });
    return new NetnsHandle(fd, path, st.dev, st.ino);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/** Runs `fn` and returns the error it throws (or fails when it does not throw). */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected an error, got none');
}
