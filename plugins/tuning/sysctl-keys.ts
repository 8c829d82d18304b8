// Sysctl keys of a tuning config -> /proc/sys paths of the pod's own netns, refused before anything
// changes unless they are plainly `net.*` (no '..', no empty or odd segments). Pure.
import { invalidConfig } from '../../lib/cni/errors.ts';
import { validateSysctlName } from '../../lib/netns/sysctl.ts';

/** One sysctl to set: the key as configured, its slash form under /proc/sys, and the value. */
export interface SysctlSetting {
  key: string;
  /** 'net/ipv4/conf/eth0/arp_notify' (validated by lib/netns). */
  name: string;
  value: string;
}

/**
 * The slash form of a key. A key with '/' uses '/' as separator and keeps dots (sysctl.d(5): so
 * `net/ipv4/conf/eth0.100/rp_filter` names a VLAN device); otherwise dots separate, as the reference
 * reads every key. The first `IFNAME` is replaced by the pod's interface name (reference behaviour).
 */
export function sysctlName(key: string, ifName: string): string {
  const segs = key.includes('/') ? key.split('/') : key.split('.');
  const at = segs.findIndex((s) => s.includes('IFNAME'));
  if (at >= 0) segs[at] = (segs[at] ?? '').replace('IFNAME', ifName);
  return segs.join('/');
}

/** Checks and converts every key; code 7 naming the first bad key. Only the network subtree of the pod's netns. */
export function parseSysctls(map: Readonly<Record<string, string>>, ifName: string): SysctlSetting[] {
  const out: SysctlSetting[] = [];
  for (const [key, value] of Object.entries(map)) {
    const bad = (why: string): never => {
      throw invalidConfig(`invalid configuration: sysctl key ${JSON.stringify(key)} ${why}`, 'only net.* keys of the pod network namespace can be set');
    };
    const name = sysctlName(key, ifName);
    const segs = name.split('/');
    if (segs[0] !== 'net' || segs.length < 2) bad('is not under net.');
    if (segs.some((s) => s === '' || s === '.' || s === '..')) bad('has an empty, "." or ".." segment');
    try {
      validateSysctlName(name);
    } catch {
      bad('has characters an interface or sysctl name cannot have');
    }
    if (value.includes('\0')) bad('has a value with a NUL character');
    out.push({ key, name, value });
  }
  return out;
}

/**
 * The reference's allowlist (/etc/cni/tuning/allowlist.conf, one regular expression per line; when
 * the file exists, every key must match one of them, searched anywhere in the key). Pure: gets the lines.
 */
export function checkAllowlist(keys: readonly string[], lines: readonly string[] | null): void {
  if (lines === null) return;
  const patterns = lines.map((l) => l.trim()).filter((l) => l !== '');
  for (const key of keys) {
    const ok = patterns.some((p) => {
      try {
        return new RegExp(p).test(key);
      } catch {
        throw invalidConfig('invalid tuning allowlist', `pattern ${JSON.stringify(p)} is not a regular expression`);
      }
    });
    if (!ok) throw invalidConfig(`invalid configuration: sysctl ${key} is not allowed`, `allowed: ${patterns.join(', ')}`);
  }
}
