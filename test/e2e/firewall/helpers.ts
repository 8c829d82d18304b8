// Shared pieces of the firewall end-to-end tests: one-off runs of the built firewall binary in a node.
import { join } from 'node:path';
import { execPlugin, type PluginRun } from '../../../testkit/cni-runner.ts';

export const ROOT = join(import.meta.dirname, '..', '..', '..');
export const BIN_DIR = join(ROOT, 'dist', 'bin');

/** Runs dist/bin/firewall (or `bin`, e.g. the reference) once inside `nodeNetns`, as a runtime would inside a chain. */
export function runFirewall(nodeNetns: string, o: {
  command: 'ADD' | 'DEL' | 'CHECK' | 'GC'; name: string; containerId: string; netns: string; prevResult?: unknown; extra?: Record<string, unknown>; bin?: string;
}): Promise<PluginRun> {
  const stdin: Record<string, unknown> = { cniVersion: '1.0.0', name: o.name, type: 'firewall', backend: 'iptables', ...(o.extra ?? {}) };
  if (o.prevResult !== undefined) stdin['prevResult'] = o.prevResult;
  // PATH: the reference Go firewall runs the iptables binary.
  const env: NodeJS.ProcessEnv = { CNI_COMMAND: o.command, CNI_CONTAINERID: o.containerId, CNI_IFNAME: 'eth0', CNI_PATH: BIN_DIR, PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };
  if (o.netns !== '') env['CNI_NETNS'] = o.netns;
  return execPlugin(o.bin ?? join(BIN_DIR, 'firewall'), env, JSON.stringify(stdin), { binDirs: [BIN_DIR], nodeNetns });
}
