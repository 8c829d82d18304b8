// TX checksum offload on the VTEP: the flannel#1279 workaround (offload off) only where it is needed.
// Before Linux 5.7, netfilter NAT of a VXLAN packet whose checksum was left to the device could
// corrupt it (fixed in 5.7); turning offload off everywhere costs 3-4x of VXLAN throughput on the
// kernels that are fine, so "auto" decides by kernel version, as Calico does.
import { release } from 'node:os';
import { Ethtool, TX_CHECKSUM_IP_GENERIC } from '../../lib/netlink/index.ts';
import type { ChecksumOffload } from '../config/backend-conf.ts';
import type { AgentLog } from '../log.ts';

/** The first kernel without the bug: 5.7. */
export const FIXED_IN = { major: 5, minor: 7 } as const;

/** "6.18.44-fc-v857" -> { major: 6, minor: 18 }; null when the text does not start with N.N. */
export function parseKernelRelease(text: string): { major: number; minor: number } | null {
  const m = /^(\d+)\.(\d+)/.exec(text);
  if (m === null) return null;
  return { major: Number(m[1]), minor: Number(m[2]) };
}

/** What weftd does with the VTEP's TX checksum offload, and why (for the log). */
export interface OffloadDecision {
  /** true: leave/put offload on (the kernel default); false: turn it off (the workaround). */
  offload: boolean;
  reason: string;
}

/** Decides from Backend.ChecksumOffload and the kernel release (os.release() by default). */
export function decideChecksumOffload(mode: ChecksumOffload, kernelRelease: string = release()): OffloadDecision {
  if (mode === 'off') return { offload: false, reason: 'Backend.ChecksumOffload is "off" in the net-conf' };
  if (mode === 'on') return { offload: true, reason: 'Backend.ChecksumOffload is "on" in the net-conf' };
  const k = parseKernelRelease(kernelRelease);
  if (k === null) return { offload: false, reason: `kernel release ${JSON.stringify(kernelRelease)} is not N.N...; assuming a kernel older than 5.7` };
  const old = k.major < FIXED_IN.major || (k.major === FIXED_IN.major && k.minor < FIXED_IN.minor);
  return old
    ? { offload: false, reason: `kernel ${k.major}.${k.minor} is older than 5.7 (VXLAN checksum bug under NAT, flannel#1279)` }
    : { offload: true, reason: `kernel ${k.major}.${k.minor} is 5.7 or newer (VXLAN checksum bug fixed)` };
}

/**
 * Idempotent, in the calling thread's netns (the node's): sets tx-checksum-ip-generic of `dev` through
 * the ethtool genetlink family; when that fails (kernels before 5.6 have no such family) spawns
 * `ethtool -K` without waiting for it: a missing ethtool costs the setting, never the data plane.
 */
export function applyChecksumOffload(dev: string, d: OffloadDecision, log: AgentLog): void {
  const state = d.offload ? 'on' : 'off';
  let et: Ethtool | undefined;
  try {
    et = Ethtool.open();
    et.setFeatures(dev, { [TX_CHECKSUM_IP_GENERIC]: d.offload });
    log.info(`TX checksum offload ${state}`, { dev, reason: d.reason, via: 'ethtool netlink' });
    return;
  } catch (e) {
    log.debug('ethtool netlink failed; falling back to ethtool -K', { dev, error: e });
  } finally {
    et?.close();
  }
  // Fetched here, on the rare fallback path: node:child_process at the top costs every weftd about
  // 2 MB of RSS (it pulls in net, dgram and streams).
  const { execFile } = process.getBuiltinModule('node:child_process');
  execFile('ethtool', ['-K', dev, TX_CHECKSUM_IP_GENERIC, state], { timeout: 5000 }, (err) => {
    if (err) log.warn(`could not turn TX checksum offload ${state}`, { dev, reason: d.reason, error: err });
    else log.info(`TX checksum offload ${state}`, { dev, reason: d.reason, via: 'ethtool -K' });
  });
}
