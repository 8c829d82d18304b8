// Check "cni": the network configuration the runtime loads (the lexically first .conflist/.conf/.json
// in the conf dir, as libcni and containerd pick it) and every plugin it names, delegates and IPAM
// included, present and executable in the bin dir. No config at all is kubelet's "NetworkPluginNotReady".
import { accessSync, constants, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckResult, Problem } from './problem.ts';

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

/** Runs the check against the directories. */
export function checkCni(confDir: string, binDir: string): CheckResult {
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
