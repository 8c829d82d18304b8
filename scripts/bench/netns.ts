// A throw-away network namespace for benchmarks, removed on exit and on Ctrl-C.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

const made = new Set<string>();

function cleanup(): void {
  for (const name of made) {
    try {
      execFileSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
    } catch {
      /* already gone */
    }
  }
  made.clear();
}
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    cleanup();
    process.exit(130);
  });
}

/** Creates a namespace `weft-b-<pid>-<hex>` and returns its name and path. Needs root. */
export function benchNetns(): { name: string; path: string; remove: () => void } {
  const name = `weft-b-${process.pid}-${randomBytes(3).toString('hex')}`;
  execFileSync('ip', ['netns', 'add', name]);
  made.add(name);
  return {
    name,
    path: `/var/run/netns/${name}`,
    remove: () => {
      execFileSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
      made.delete(name);
    },
  };
}
