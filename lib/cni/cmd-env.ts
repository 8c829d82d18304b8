// The CNI_* environment of one invocation: which variables each command needs, their validation,
// and the refusal to configure the plugin's own network namespace.
import { statSync } from 'node:fs';
import { invalidEnv } from './errors.ts';
import { validateContainerId, validateIfName } from './ids.ts';
import type { Command } from './types.ts';
import type { Env } from './plugin.ts';

/** Commands the skeleton dispatches. */
export const COMMANDS: readonly Command[] = ['ADD', 'DEL', 'CHECK', 'VERSION', 'GC', 'STATUS'];

type EnvVar = 'CNI_CONTAINERID' | 'CNI_NETNS' | 'CNI_IFNAME' | 'CNI_PATH';

// Spec 1.0/1.1 "Parameters": ADD and CHECK need all four; DEL may lack CNI_NETNS (the netns can be
// gone); GC and STATUS only need CNI_PATH (to reach delegates); VERSION needs nothing.
const REQUIRED: Record<Command, readonly EnvVar[]> = {
  ADD: ['CNI_CONTAINERID', 'CNI_NETNS', 'CNI_IFNAME', 'CNI_PATH'],
  CHECK: ['CNI_CONTAINERID', 'CNI_NETNS', 'CNI_IFNAME', 'CNI_PATH'],
  DEL: ['CNI_CONTAINERID', 'CNI_IFNAME', 'CNI_PATH'],
  GC: ['CNI_PATH'],
  STATUS: ['CNI_PATH'],
  VERSION: [],
};

/** True when `s` names a command we dispatch. */
export function isCommand(s: string): s is Command {
  return (COMMANDS as readonly string[]).includes(s);
}

/** The checked CNI_* values of one invocation. */
export interface CmdEnv {
  containerId: string;
  netns: string;
  ifName: string;
  args: string;
  path: string[];
}

/** Check the variables `command` needs (code 4 naming all missing ones) and validate IDs and names. */
export function readCmdEnv(command: Command, env: Env): CmdEnv {
  const missing = REQUIRED[command].filter((k) => !env[k]);
  if (missing.length) throw invalidEnv(`required env variables [${missing.join(',')}] missing`);
  const containerId = env['CNI_CONTAINERID'] ?? '';
  const ifName = env['CNI_IFNAME'] ?? '';
  const netns = env['CNI_NETNS'] ?? '';
  // Validate whenever present, not only when required: they become paths and kernel names.
  if (containerId !== '') validateContainerId(containerId);
  if (ifName !== '') validateIfName(ifName);
  if (netns.includes('\0')) throw invalidEnv('invalid CNI_NETNS', 'contains a NUL character');
  const path = (env['CNI_PATH'] ?? '').split(':').filter((p) => p !== '');
  return { containerId, netns, ifName, args: env['CNI_ARGS'] ?? '', path };
}

function isTruthy(v: string | undefined): boolean {
  return v === '1' || v?.toLowerCase() === 'true';
}

/** dev+ino of the calling thread's netns; /proc/thread-self exists since Linux 3.17. */
function ownNetnsId(): { dev: number; ino: number } | undefined {
  for (const p of ['/proc/thread-self/ns/net', '/proc/self/ns/net']) {
    try {
      const st = statSync(p);
      return { dev: st.dev, ino: st.ino };
    } catch {
      // try the next
    }
  }
  return undefined;
}

/**
 * Refuse (code 4) a CNI_NETNS that is the caller's own network namespace, compared by dev+ino of the
 * nsfs inode, unless CNI_NETNS_OVERRIDE=1. A path that does not exist is left to the plugin (DEL must
 * tolerate a netns that is already gone).
 */
export function checkNotOwnNetns(netns: string, env: Env): void {
  if (netns === '' || isTruthy(env['CNI_NETNS_OVERRIDE'])) return;
  let target;
  try {
    target = statSync(netns);
  } catch {
    return;
  }
  const own = ownNetnsId();
  if (own && target.dev === own.dev && target.ino === own.ino) {
    throw invalidEnv(
      'CNI_NETNS is the plugin\'s own network namespace',
      `${JSON.stringify(netns)} refers to the runtime's netns; set CNI_NETNS_OVERRIDE=1 to allow it`,
    );
  }
}
