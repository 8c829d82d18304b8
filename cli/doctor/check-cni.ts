// Check "cni": the network configuration the runtime loads (the lexically first .conflist/.conf/.json
// in the conf dir, as libcni and containerd pick it) and every plugin it names, delegates and IPAM
// included, present and executable in the bin dir. No config at all is kubelet's "NetworkPluginNotReady".
// A configuration of someone else's that sorts before weft's (kube-flannel's 10-flannel.conflist left
// behind, podman's 87-podman-bridge.conflist) is the one the runtime uses: named, with the fix.
import { accessSync, constants, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readManifest } from '../install/manifest.ts';
import { DEFAULTS } from '../install/options.ts';
import type { CheckResult, Problem } from './problem.ts';

const DEFAULT_STATE_DIR = DEFAULTS.stateDir;

/** The files of `confDir` weft wrote: those `weft install`'s manifest in `stateDir` lists, and any named *weft*. */
export function weftConfigs(confDir: string, names: readonly string[], stateDir: string): string[] {
  let listed: string[] = [];
  try {
    listed = (readManifest(stateDir)?.files ?? []).map((f) => f.path);
  } catch {
    // a corrupt manifest is uninstall's concern; the names still tell
  }
  return names.filter((n) => n.includes('weft') || listed.includes(join(confDir, n)));
}

/** Whose configuration `conf` is, for the fix: kube-flannel's, podman's, or unknown. */
function ownerOf(name: string, conf: unknown): 'kube-flannel' | 'podman' | null {
  const r = (typeof conf === 'object' && conf !== null ? conf : {}) as Record<string, unknown>;
  if (name.includes('podman') || r['name'] === 'podman') return 'podman';
  if (name.includes('flannel') || (r['name'] === 'cbr0' && pluginTypes(conf).includes('flannel'))) return 'kube-flannel';
  return null;
}

/** The problem of `first` sorting before weft's `ours` (pure). */
export function shadowProblem(confDir: string, first: string, conf: unknown, ours: string): Problem {
  const path = join(confDir, first);
  const r = (typeof conf === 'object' && conf !== null ? conf : {}) as Record<string, unknown>;
  const what = `network ${JSON.stringify(r['name'] ?? '?')}, plugins ${pluginTypes(conf).join(',') || '?'}`;
  const rename = `or make weft's sort first: weft install --conflist-name 00-weft.conflist (then remove ${join(confDir, ours)})`;
  const owner = ownerOf(first, conf);
  const fix = owner === 'kube-flannel'
    ? `it is kube-flannel's, left behind: once kube-flannel's DaemonSet is gone (its install-cni container writes it again), rm ${path}; ${rename}`
    : owner === 'podman'
      ? `it is podman's default network (podman with the CNI backend wrote it; with netavark podman does not read it): move it out of ${confDir} if no container uses it, ${rename}`
      : `move ${path} out of ${confDir} if nothing needs it, ${rename}`;
  return {
    check: 'cni',
    detail: `${path} (${what}) sorts before weft's ${ours}: containerd, CRI-O and kubelet load the first configuration in ${confDir}, so pods get ${first}'s network, not weft's`,
    fix,
  };
}

/** Every `type` a config names: plugins, their `ipam` and flannel's `delegate` (and its ipam). */
export function pluginTypes(conf: unknown): string[] {
  const out = new Set<string>();
  const visit = (o: unknown): void => {
    if (typeof o !== 'object' || o === null) return;
    const r = o as Record<string, unknown>;
    if (typeof r['type'] === 'string') out.add(r['type']);
    for (const k of ['ipam', 'delegate']) visit(r[k]);
    if (Array.isArray(r['plugins'])) for (const p of r['plugins']) visit(p);
  };
  visit(conf);
  // flannel renders a bridge + host-local delegate when the delegate names no type.
  if (out.has('flannel')) { out.add('bridge'); out.add('host-local'); }
  return [...out].sort();
}

/** Runs the check against the directories (`stateDir`: where `weft install` keeps its manifest). */
export function checkCni(confDir: string, binDir: string, stateDir = DEFAULT_STATE_DIR): CheckResult {
  const check = 'cni';
  const problems: Problem[] = [];
  let names: string[];
  try {
    names = readdirSync(confDir).filter((n) => /\.(conflist|conf|json)$/.test(n)).sort();
  } catch {
    names = [];
  }
  const first = names[0];
  if (first === undefined) {
    problems.push({ check, detail: `no network configuration in ${confDir}: the runtime reports the network plugin not ready and starts no pod`, fix: 'weft install --backend <backend> (writes the conflist), or pass --cni-conf-dir as your runtime has it' });
    return { check, problems, facts: { confDir } };
  }
  const path = join(confDir, first);
  let conf: unknown;
  try {
    conf = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    problems.push({ check, detail: `${path} is not valid JSON (${(e as Error).message}): the runtime cannot load it`, fix: `fix or replace ${path}` });
    return { check, problems, facts: { config: path } };
  }
  const ours = weftConfigs(confDir, names, stateDir);
  if (ours.length > 0 && !ours.includes(first)) problems.push(shadowProblem(confDir, first, conf, ours[0] as string));
  const types = pluginTypes(conf);
  const missing = types.filter((t) => {
    try {
      accessSync(join(binDir, t), constants.X_OK);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length > 0) {
    problems.push({ check, detail: `${path} uses ${missing.map((t) => `"${t}"`).join(', ')}, missing or not executable in ${binDir}: every pod ADD fails with "failed to find plugin"`, fix: `weft install (copies the plugins into ${binDir}), or pass --cni-bin-dir as your runtime has it` });
  }
  return { check, problems, facts: { config: path, plugins: types.join(',') } };
}
