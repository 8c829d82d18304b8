// Check "kernel": facts of the running kernel that break a node: the VXLAN checksum bug (netfilter
// NAT corrupting UDP tunnel checksums, fixed in Linux 5.7) and modules the data plane needs.
// A module counts as present when loaded (/sys/module), built in (modules.builtin), or witnessed
// by a device of its kind on the node; unknown (no /lib/modules) is reported as a fact, not a problem.
import { existsSync, readFileSync } from 'node:fs';
import { release } from 'node:os';
import { Ethtool, TX_CHECKSUM_IP_GENERIC } from '../../lib/netlink/index.ts';
import type { CheckResult, Problem } from './problem.ts';

/** "5.4.0-150-generic" -> [5, 4]; null when unparsable. */
export function kernelVersion(rel: string): [number, number] | null {
  const m = /^(\d+)\.(\d+)/.exec(rel);
  return m === null ? null : [Number(m[1]), Number(m[2])];
}

/** Modules this node needs, and why. */
export function neededModules(backend: string | null, o: { kubelet: boolean; bandwidth: boolean }): Array<{ name: string; why: string }> {
  const out = [
    { name: 'bridge', why: 'cni0' },
    { name: 'veth', why: 'pod interfaces' },
    { name: 'nf_tables', why: 'masquerade, hostPort and firewall rules' },
  ];
  if (backend === 'vxlan') out.push({ name: 'vxlan', why: 'the vxlan backend' });
  if (backend === 'udp') out.push({ name: 'tun', why: 'the udp backend (flannel0)' });
  if (o.kubelet) out.push({ name: 'br_netfilter', why: 'kube-proxy sees bridged pod traffic only through it (net.bridge.bridge-nf-call-iptables)' });
  if (o.bandwidth) out.push({ name: 'ifb', why: 'the bandwidth plugin shapes egress through an ifb device' });
  return out;
}

/** How the presence of a module was decided. */
export type ModuleState = 'present' | 'missing' | 'unknown';

/** Inputs (injected for tests). */
export interface KernelInput {
  release: string;
  backend: string | null;
  modules: Array<{ name: string; why: string; state: ModuleState }>;
  /** The VTEP's tx-checksum-ip-generic as the kernel reports it; null when unknown (no VTEP, no ethtool netlink). */
  vtepTxChecksum?: boolean | null;
}

/** Runs the check (pure). */
export function judgeKernel(i: KernelInput): CheckResult {
  const check = 'kernel';
  const problems: Problem[] = [];
  const facts: Record<string, unknown> = { release: i.release };
  const v = kernelVersion(i.release);
  if (i.vtepTxChecksum !== undefined && i.vtepTxChecksum !== null) facts['vtepTxChecksum'] = i.vtepTxChecksum ? 'on' : 'off';
  // With the VTEP's offload known to be off, the workaround is in place and the old kernel is harmless.
  if (i.backend === 'vxlan' && v !== null && (v[0] < 5 || (v[0] === 5 && v[1] < 7)) && i.vtepTxChecksum !== false) {
    problems.push({ check, detail: `kernel ${i.release} is older than 5.7: NAT can corrupt VXLAN UDP checksums (traffic through Services or masquerade stalls)`, fix: 'upgrade the kernel to 5.7 or newer, or turn checksum offload off on the VTEP: ethtool -K flannel.1 tx-checksum-ip-generic off (weftd does so when Backend.ChecksumOffload is "auto" or "off")' });
  }
  for (const m of i.modules) {
    if (m.state === 'missing') problems.push({ check, detail: `kernel module ${m.name} is not available (needed for ${m.why})`, fix: `modprobe ${m.name} and list it in /etc/modules-load.d/weft.conf` });
  }
  const unknown = i.modules.filter((m) => m.state === 'unknown').map((m) => m.name);
  if (unknown.length > 0) facts['unverifiedModules'] = unknown.join(',');
  return { check, problems, facts };
}

/** Presence of module `name`: loaded, built in, loadable (modules.dep), or witnessed by a device of its kind. */
export function moduleState(name: string, rel: string, witness: boolean): ModuleState {
  if (witness || existsSync(`/sys/module/${name}`)) return 'present';
  const dir = `/lib/modules/${rel}`;
  if (!existsSync(dir)) return 'unknown';
  // modules.builtin lists built-in ones; modules.dep the loadable ones (the data plane loads them on first use).
  for (const f of ['modules.builtin', 'modules.dep']) {
    try {
      if (readFileSync(`${dir}/${f}`, 'utf8').includes(`/${name}.ko`)) return 'present';
    } catch {
      /* file absent: try the next */
    }
  }
  return 'missing';
}

/** tx-checksum-ip-generic of `dev` through ethtool netlink, in the caller's netns; null when it cannot be read (no device, kernel < 5.6). */
export function readTxChecksum(dev: string): boolean | null {
  let et: Ethtool | undefined;
  try {
    et = Ethtool.open();
    return et.activeFeatures(dev).has(TX_CHECKSUM_IP_GENERIC);
  } catch {
    return null;
  } finally {
    et?.close();
  }
}

/** Reads the kernel facts from this machine (and `vtep`'s checksum offload, for vxlan). */
export function checkKernel(backend: string | null, o: { kubelet: boolean; bandwidth: boolean; witnesses: Record<string, boolean>; vtep?: string }): CheckResult {
  const rel = release();
  const modules = neededModules(backend, o).map((m) => ({ ...m, state: moduleState(m.name, rel, o.witnesses[m.name] === true) }));
  return judgeKernel({ release: rel, backend, modules, ...(o.vtep !== undefined ? { vtepTxChecksum: readTxChecksum(o.vtep) } : {}) });
}
