// flanneld's command line as weftd's (runs before commander, no netns involved): Go flag syntax
// (`-name value`, `-name=value`, `--ip-masq=false`) becomes commander's, `FLANNELD_<NAME>`
// environment variables fill the flags the command line lacks (flannel's flagutil.SetFlagsFromEnv:
// CLI wins, empty values skipped), and flanneld flags weftd has no equivalent for are refused unless
// they hold flanneld's default (then they change nothing). A flanneld unit thus runs under weftd.

/** flanneld flags weftd implements, by kind (`list` = repeatable). */
export const FLANNELD_FLAGS: Readonly<Record<string, 'string' | 'bool' | 'list'>> = {
  'etcd-endpoints': 'string', 'etcd-prefix': 'string', 'etcd-keyfile': 'string', 'etcd-certfile': 'string',
  'etcd-cafile': 'string', 'etcd-username': 'string', 'etcd-password': 'string',
  iface: 'list', 'iface-regex': 'list', 'iface-can-reach': 'string',
  'public-ip': 'string', 'public-ipv6': 'string', 'subnet-file': 'string', 'net-config-path': 'string',
  'ip-masq': 'bool', 'subnet-lease-renew-margin': 'string', 'healthz-ip': 'string', 'healthz-port': 'string',
  v: 'string', 'kube-subnet-mgr': 'bool', 'kube-api-url': 'string', 'kubeconfig-file': 'string', 'kube-annotation-prefix': 'string',
  'iptables-forward-rules': 'bool',
};

/** Boolean flanneld flags that default to true: off is passed on as commander's `--no-<name>`. */
const DEFAULT_TRUE = new Set(['iptables-forward-rules']);

/** commander's spelling of a boolean flanneld flag's value; null when the value is commander's default (nothing to pass). */
function boolArg(name: string, on: boolean): string | null {
  if (DEFAULT_TRUE.has(name)) return on ? null : `--no-${name}`;
  return on ? `--${name}` : null;
}

/** flanneld flags weftd does not implement: their flanneld default (accepted, it changes nothing) and why. */
export const FLANNELD_REFUSED: Readonly<Record<string, { kind: 'string' | 'bool'; dflt: string; why: string }>> = {
  'set-node-network-unavailable': { kind: 'bool', dflt: 'true', why: 'weftd --kube-subnet-mgr always sets NetworkUnavailable=False on its node' },
  'iptables-resync': { kind: 'string', dflt: '5', why: 'weftd uses nftables and re-applies its rules on its own period (--resync-interval)' },
  'ip-masq-fully-random-disable': { kind: 'bool', dflt: 'false', why: "weftd's masquerade is always fully random" },
  'ip-blackhole-route': { kind: 'bool', dflt: 'false', why: 'weftd adds no blackhole route for its subnet' },
  vmodule: { kind: 'string', dflt: '', why: 'per-file log levels do not exist in weftd (use --log-level)' },
  log_backtrace_at: { kind: 'string', dflt: ':0', why: 'weftd has no log backtraces' },
};

/** flanneld's default --etcd-endpoints (used when an --etcd-* flag comes without endpoints). */
export const FLANNELD_DEFAULT_ETCD_ENDPOINTS = 'http://127.0.0.1:4001,http://127.0.0.1:2379';

/** The FLANNELD_* variable of a flag ("etcd-endpoints" -> FLANNELD_ETCD_ENDPOINTS). */
export function flanneldEnvName(flag: string): string {
  return `FLANNELD_${flag.toUpperCase().replace(/-/g, '_')}`;
}

/** Go's strconv.ParseBool; throws naming the flag for anything else. */
export function parseGoBool(flag: string, v: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  throw new Error(`--${flag} ${JSON.stringify(v)} is not a boolean (true/false/1/0)`);
}

function refuse(flag: string, value: string): void {
  const r = FLANNELD_REFUSED[flag];
  if (!r) return;
  const same = r.kind === 'bool' ? parseGoBool(flag, value) === parseGoBool(flag, r.dflt) : value === r.dflt;
  if (!same) throw new Error(`--${flag}=${value}: flanneld flag not supported by weftd (${r.why}); remove it`);
}

/**
 * Rewrites user arguments (argv without node and script) in flanneld's syntax into commander's and
 * appends the FLANNELD_* variables of flags absent from them; throws on a refused flag.
 */
export function flanneldArgv(args: readonly string[], env: Readonly<Record<string, string | undefined>>): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') { out.push(...args.slice(i)); break; }
    const m = /^--?([A-Za-z][\w-]*)(?:=([\s\S]*))?$/.exec(a);
    const name = m?.[1];
    // One-letter options other than klog's -v stay commander's (-h, -V).
    if (!m || name === undefined || (name.length === 1 && name !== 'v')) { out.push(a); continue; }
    const kind = FLANNELD_FLAGS[name] ?? FLANNELD_REFUSED[name]?.kind;
    if (kind === undefined) { out.push(m[2] === undefined ? `--${name}` : `--${name}=${m[2]}`); continue; }
    seen.add(name);
    if (kind === 'bool') {
      const on = m[2] === undefined ? true : parseGoBool(name, m[2]);
      refuse(name, String(on));
      const arg = FLANNELD_FLAGS[name] ? boolArg(name, on) : null;
      if (arg !== null) out.push(arg);
      continue;
    }
    let value = m[2];
    if (value === undefined) {
      if (i + 1 >= args.length) throw new Error(`--${name} needs a value`);
      value = args[++i] as string;
    }
    refuse(name, value);
    if (FLANNELD_FLAGS[name]) out.push(`--${name}=${value}`);
  }
  for (const name of [...Object.keys(FLANNELD_FLAGS), ...Object.keys(FLANNELD_REFUSED)]) {
    const value = env[flanneldEnvName(name)];
    if (seen.has(name) || value === undefined || value === '') continue;
    const kind = FLANNELD_FLAGS[name] ?? FLANNELD_REFUSED[name]?.kind;
    if (kind === 'bool') {
      const on = parseGoBool(name, value);
      refuse(name, String(on));
      const arg = FLANNELD_FLAGS[name] ? boolArg(name, on) : null;
      if (arg !== null) out.push(arg);
    } else {
      refuse(name, value);
      if (FLANNELD_FLAGS[name]) out.push(`--${name}=${value}`);
    }
  }
  return out;
}
