// The installed weftd unit as doctor's defaults: `weft install` writes weftd's flags on the unit's
// ExecStart= line (`--flag=value`, no quoting) and the etcd password into the EnvironmentFile= it
// names (KEY="value"), so doctor, run with no flags on that node, reads the same lease source with
// the same credentials. Reads files only; no systemd involved.
import { readFileSync } from 'node:fs';
import type { RawDoctorFlags } from './options.ts';
import { isSysError } from '../../lib/errno/errno.ts';

/** Where `weft install` puts the unit. */
export const DEFAULT_UNIT = '/etc/systemd/system/weftd.service';

/** weftd flag -> doctor's RawDoctorFlags key, for the flags doctor shares. */
const UNIT_FLAGS: Readonly<Record<string, keyof RawDoctorFlags | 'healthzIp' | 'healthzPort'>> = {
  store: 'store', 'etcd-endpoints': 'etcdEndpoints', 'etcd-prefix': 'etcdPrefix', 'etcd-keyfile': 'etcdKeyfile',
  'etcd-certfile': 'etcdCertfile', 'etcd-cafile': 'etcdCafile', 'etcd-username': 'etcdUsername', 'etcd-password': 'etcdPassword',
  'net-conf': 'netConf', 'net-config-path': 'netConf', 'subnet-file': 'subnetFile', iface: 'iface', 'public-ip': 'publicIp',
  'metrics-addr': 'metricsAddr', 'healthz-ip': 'healthzIp', 'healthz-port': 'healthzPort',
  'kube-subnet-mgr': 'kubeSubnetMgr', 'kubeconfig-file': 'kubeconfigFile', 'kube-api-url': 'kubeApiUrl', 'kube-annotation-prefix': 'kubeAnnotationPrefix',
};

/** Flags without a value (present means true). */
const BOOLEAN_FLAGS = new Set(['kube-subnet-mgr']);

/** The lease-source keys: taken from the unit only as a group, and only when the command line names none. */
const SOURCE_KEYS: ReadonlyArray<keyof RawDoctorFlags> = ['store', 'etcdEndpoints', 'etcdPrefix', 'etcdKeyfile', 'etcdCertfile', 'etcdCafile', 'etcdUsername', 'etcdPassword',
  'kubeSubnetMgr', 'kubeconfigFile', 'kubeApiUrl', 'kubeAnnotationPrefix', 'nodeName'];

/** KEY=value lines of a systemd EnvironmentFile (double quotes with \\ escapes, or bare values). */
export function parseEnvironmentFile(text: string): Map<string, string> {
  const env = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!m) continue;
    const raw = (m[2] as string).trim();
    const q = /^"((?:[^"\\]|\\.)*)"$/.exec(raw) ?? /^'([^']*)'$/.exec(raw);
    env.set(m[1] as string, q ? (q[1] as string).replace(/\\(.)/g, '$1') : raw);
  }
  return env;
}

/** The doctor flags a unit's text carries (pure); `env` expands ${VAR} and $VAR in its arguments. */
export function parseUnitFlags(unit: string, env: ReadonlyMap<string, string>): RawDoctorFlags {
  const exec = /^ExecStart=(.*)$/m.exec(unit)?.[1] ?? '';
  const args = exec.trim().split(/\s+/).map((a) => a.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_, a1?: string, a2?: string) => env.get(a1 ?? a2 ?? '') ?? ''));
  const out: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const m = /^--?([a-z][a-z0-9-]*)(?:=(.*))?$/.exec(args[i] as string);
    const key = m ? UNIT_FLAGS[m[1] as string] : undefined;
    if (!m || key === undefined) continue;
    if (BOOLEAN_FLAGS.has(m[1] as string)) {
      if (m[2] === undefined || m[2] === 'true') out[key] = 'true';
      continue;
    }
    const value = m[2] ?? (args[i + 1] !== undefined && !(args[i + 1] as string).startsWith('-') ? args[++i] : undefined);
    if (value !== undefined) out[key] = value;
  }
  // flanneld's form of the same server (a flanneld unit run by weftd): --healthz-port N (0: off) on --healthz-ip.
  const port = out['healthzPort'];
  if (out['metricsAddr'] === undefined && port !== undefined && /^[1-9]\d{0,4}$/.test(port)) {
    const ip = out['healthzIp'] ?? '0.0.0.0';
    out['metricsAddr'] = `${ip.includes(':') ? `[${ip}]` : ip}:${port}`;
  }
  delete out['healthzIp'];
  delete out['healthzPort'];
  // weftd --kube-subnet-mgr finds its Node by NODE_NAME, which `weft install` sets with Environment=.
  const node = /^Environment=NODE_NAME=(\S+)$/m.exec(unit)?.[1];
  if (node !== undefined && out['kubeSubnetMgr'] !== undefined) out['nodeName'] = node;
  return out as RawDoctorFlags;
}

/** Reads the unit (and its EnvironmentFile=s); null when it does not exist and was not asked for by name. */
export function readUnitFlags(path: string, explicit: boolean): RawDoctorFlags | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if (!explicit && isSysError(e, 'ENOENT')) return null;
    throw new Error(`--unit ${JSON.stringify(path)}: ${(e as Error).message}`, { cause: e });
  }
  const env = new Map<string, string>();
  for (const m of text.matchAll(/^EnvironmentFile=-?(.*)$/gm)) {
    try {
      for (const [k, v] of parseEnvironmentFile(readFileSync((m[1] as string).trim(), 'utf8'))) env.set(k, v);
    } catch {
      // unreadable (not root, or removed): the flags that need it stay unexpanded and fail visibly
    }
  }
  return parseUnitFlags(text, env);
}

/** `cli` with the unit's flags as defaults: the command line (and FLANNELD_*) wins; its lease source replaces the unit's whole. */
export function withUnitDefaults(cli: RawDoctorFlags, unit: RawDoctorFlags | null): RawDoctorFlags {
  if (unit === null) return cli;
  const out: RawDoctorFlags = { ...cli };
  const cliNamesSource = SOURCE_KEYS.some((k) => cli[k] !== undefined);
  for (const [k, v] of Object.entries(unit) as Array<[keyof RawDoctorFlags, string]>) {
    // A --net-conf belongs to its lease source (with etcd, absent means <prefix>/config).
    if (cliNamesSource && (SOURCE_KEYS.includes(k) || k === 'netConf')) continue;
    if (out[k] === undefined) (out as Record<string, unknown>)[k] = v;
  }
  return out;
}
